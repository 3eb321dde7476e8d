package dev.kvlab.admin;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.KvlabApplication;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** A node with neither a cluster secret nor an admin token (a single node) refuses every management write, and says how to allow them. */
class ManagementWithoutCredentialTest {

    @Test
    void aNodeWithoutCredentialsRefusesManagementWritesAndSaysHowToConfigureOne(@TempDir Path dir) throws Exception {
        try (ConfigurableApplicationContext node = new SpringApplicationBuilder(KvlabApplication.class).run("--server.port=0",
                "--management.server.port=0", "--kvlab.storage.dir=" + Files.createDirectories(dir.resolve("data")),
                "--kvlab.storage.block-cache-size=8MB", "--kvlab.storage.write-buffer-size=4MB", "--kvlab.netty.event-loops=1")) {
            KvClient management = KvClient.onPort(node.getEnvironment().getRequiredProperty("local.management.port", Integer.class));
            HttpResponse<byte[]> repair = management.send("POST", "/actuator/kvlab/repair", HttpRequest.BodyPublishers.ofString("{}"),
                    "Content-Type", "application/json", "Authorization", "Bearer anything-at-all-0123456789");
            assertThat(repair.statusCode()).as(text(repair)).isEqualTo(403);
            assertThat(text(repair)).contains("kvlab.management.admin-token-file");
            assertThat(management.send("GET", "/actuator/health", HttpRequest.BodyPublishers.noBody()).statusCode()).isEqualTo(200);
        }
    }
}
