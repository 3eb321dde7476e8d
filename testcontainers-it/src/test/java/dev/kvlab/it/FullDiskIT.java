package dev.kvlab.it;

import static dev.kvlab.it.fixture.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabNode;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Random;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.Container.ExecResult;

/**
 * A node on a small filesystem that fills up: writes answer 507 and say why, reads go on, readiness
 * says what is wrong, and once space returns the node takes writes again by itself, with every
 * write it acknowledged still there.
 */
class FullDiskIT {

    static final int VALUE = 64 * 1024;
    static final int MAX_WRITES = 600;

    @Test
    void aFullDiskRefusesWritesWith507KeepsServingReadsAndRecoversWhenSpaceReturns() throws Exception {
        // RocksDB resumes once the disk has room for a memtable's flush: small memtables here.
        try (KvlabNode node = new KvlabNode().withDataOnTmpfs("48m").withSetting("kvlab.storage.write-buffer-size", "4MB")) {
            node.start();
            KvClient client = node.client();
            // Most of the filesystem taken by something else, as when a disk fills up.
            exec(node, "dd if=/dev/zero of=/data/filler bs=1M count=30");

            List<String> acknowledged = new ArrayList<>();
            HttpResponse<byte[]> refused = null;
            for (int i = 0; i < MAX_WRITES && refused == null; i++) {
                HttpResponse<byte[]> put = client.put("full-" + i, valueOf(i), null);
                if (put.statusCode() == 201) {
                    acknowledged.add("full-" + i);
                } else {
                    refused = put;
                }
            }
            assertThat(refused).as("a write refused within %d writes of 64 KiB", MAX_WRITES).isNotNull();
            assertThat(refused.statusCode()).isEqualTo(507);
            assertThat(text(refused)).contains("disk is full", "reads go on");
            assertThat(acknowledged).isNotEmpty();
            System.out.println("[FullDiskIT] " + acknowledged.size() + " writes of 64 KiB acknowledged, then: "
                    + refused.statusCode() + " " + text(refused).strip());

            assertThat(client.put("another", valueOf(0), null).statusCode()).as("still full").isEqualTo(507);
            assertThat(client.get(acknowledged.getFirst()).body()).isEqualTo(valueOf(0));
            assertThat(client.status().statusCode()).isEqualTo(200);
            HttpResponse<byte[]> readiness = node.management().send("GET", "/actuator/health/readiness", BodyPublishers.noBody());
            assertThat(readiness.statusCode()).isEqualTo(503);
            assertThat(text(readiness)).contains("the disk is full");

            exec(node, "rm /data/filler");
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                    .until(() -> client.put("after", valueOf(1), null).statusCode() == 201);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> node.management().send("GET", "/actuator/health/readiness", BodyPublishers.noBody()).statusCode() == 200);
            for (String key : acknowledged) {
                int i = Integer.parseInt(key.substring("full-".length()));
                assertThat(client.get(key).body()).as(key).isEqualTo(valueOf(i));
            }
            assertThat(client.get("after").body()).isEqualTo(valueOf(1));
        }
    }

    private static void exec(KvlabNode node, String command) throws Exception {
        ExecResult result = node.execInContainer("sh", "-c", command);
        assertThat(result.getExitCode()).as("%s: %s", command, result.getStderr()).isZero();
    }

    /** Incompressible, as RocksDB would otherwise store far less than it is sent. */
    private static byte[] valueOf(int i) {
        byte[] value = new byte[VALUE];
        new Random(i).nextBytes(value);
        return value;
    }
}
