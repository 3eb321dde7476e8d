package dev.kvlab.api;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A node holds the values of requests in flight up to {@code kvlab.memory.max-bytes-in-flight}: past
 * it a PUT gets 503 and changes nothing, and the room comes back when the held requests end.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"kvlab.api.max-value-size=1KB", "kvlab.memory.max-bytes-in-flight=1500B",
                "kvlab.storage.dir=${java.io.tmpdir}/kvlab-budget-test-${random.uuid}"})
class MemoryBudgetApiTest {

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    MemoryBudget budget;

    @Test
    void aPutWithNoRoomLeftGets503AndAPutAfterTheHeldOneEndsIsStored() throws Exception {
        KvClient client = KvClient.onPort(port);
        byte[] held = filled(1000, 'h');
        byte[] next = filled(600, 'n');
        try (Socket slow = new Socket("127.0.0.1", port)) {
            // A client that has sent 900 bytes of a 1000-byte body: the node holds them and the
            // record's header (13 bytes), and at most the whole body, as they arrive.
            OutputStream out = slow.getOutputStream();
            out.write(("PUT " + KvClient.entity("held", null) + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.write(held, 0, 900);
            out.flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() >= 913);
            long holding = budget.held();
            assertThat(holding).isLessThanOrEqualTo(1013);
            assertThat(text(KvClient.onPort(managementPort).send("GET", "/actuator/prometheus", HttpRequest.BodyPublishers.noBody())))
                    .contains("kvlab_memory_held_bytes{application=\"kvlab\"} " + holding + ".0");

            HttpResponse<byte[]> refused = client.put("next", next);
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(text(refused)).contains("1500 bytes", "kvlab.memory.max-bytes-in-flight", "retry later");
            assertThat(client.get("next").statusCode()).as("a refused PUT stores nothing").isEqualTo(404);
            assertThat(budget.held()).as("the refused body holds nothing once answered").isEqualTo(holding);

            out.write(held, 900, held.length - 900);
            out.flush();
            assertThat(RawHttp.readResponse(slow.getInputStream()).status()).isEqualTo(201);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);

        assertThat(client.put("next", next).statusCode()).isEqualTo(201);
        assertThat(client.get("next").body()).isEqualTo(next);
        assertThat(client.get("held").body()).isEqualTo(held);
        // A GET's bytes are given back once its answer is written, which the client may see first.
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);
    }

    @Test
    void aChunkedBodyIsHeldAsItGrowsAndGets503WhenItOutgrowsTheRoomLeft() throws Exception {
        KvClient client = KvClient.onPort(port);
        try (Socket slow = new Socket("127.0.0.1", port)) {
            OutputStream out = slow.getOutputStream();
            out.write(("PUT " + KvClient.entity("held-chunked", null) + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.write(filled(600, 's'));
            out.flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() >= 613);

            // Less than 900 bytes are left: a chunked body is held as its chunks arrive, and refused past them.
            RawHttp.Response refused = RawHttp.put(port, KvClient.entity("chunked", null), filled(900, 'c'), true);
            assertThat(refused.status()).isEqualTo(503);
            assertThat(client.get("chunked").statusCode()).isEqualTo(404);
        }
        // The slow client hung up without its body: its request ends, and so does its hold.
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);
        assertThat(RawHttp.put(port, KvClient.entity("chunked", null), filled(900, 'c'), true).status()).isEqualTo(201);
    }

    private static byte[] filled(int size, char c) {
        byte[] bytes = new byte[size];
        Arrays.fill(bytes, (byte) c);
        return bytes;
    }
}
