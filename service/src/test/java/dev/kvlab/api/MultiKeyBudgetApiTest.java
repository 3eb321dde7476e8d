package dev.kvlab.api;

import static dev.kvlab.testing.MultiKeyRequests.NDJSON;
import static dev.kvlab.testing.MultiKeyRequests.batch;
import static dev.kvlab.testing.MultiKeyRequests.keys;
import static dev.kvlab.testing.MultiKeyRequests.lines;
import static dev.kvlab.testing.MultiKeyRequests.post;
import static dev.kvlab.testing.MultiKeyRequests.putOp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Multi-gets and batches on a small memory budget with large values: a multi-get streams more
 * values than the budget holds, since it reads a window of keys at a time and no further than the
 * client takes; a batch the budget cannot hold is a 503 that applies nothing.
 *
 * <p>The budget (800 KiB) holds one multi-get stream's buffers (about 640 KiB for 64 KiB values) and
 * two values of 60 KiB besides: with a window of 2 every key is found; a wider window would leave
 * keys without room (503).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"kvlab.api.max-value-size=64KB", "kvlab.memory.max-bytes-in-flight=800KB", "kvlab.api.multi-key.window=2",
                "kvlab.api.multi-key.max-batch-size=2MB", "kvlab.storage.dir=${java.io.tmpdir}/kvlab-multikey-budget-${random.uuid}"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MultiKeyBudgetApiTest {

    static final int KEYS = 200;
    static final int VALUE_BYTES = 60 * 1024;

    @LocalServerPort
    int port;

    @Autowired
    MemoryBudget budget;

    @Autowired
    MeterRegistry registry;

    String[] keys;

    @BeforeAll
    void fill() {
        KvClient client = KvClient.onPort(port);
        keys = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = "large-" + i;
            assertThat(client.put(keys[i], filled(VALUE_BYTES, (char) ('a' + i % 26))).statusCode()).isEqualTo(201);
        }
    }

    @Test
    void aMultiGetStreamsFarMoreThanTheBudgetHoldsWithEveryKeyFound() throws Exception {
        String[] asked = Arrays.copyOf(keys, 40);

        RawHttp.Response response = post(port, "/v0/entities/get", keys(asked), NDJSON);

        assertThat(response.status()).isEqualTo(200);
        assertThat(lines(response)).hasSize(40).allSatisfy(line -> assertThat(line).contains("\"status\":200,"));
        assertThat(response.body().length).as("2.4 MiB of values, three times the budget").isGreaterThan(3 * 800 * 1024);
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);
    }

    @Test
    void aClientThatStopsReadingStopsTheReadsAndOneThatHangsUpGivesTheRoomBack() throws Exception {
        double readsBefore = storageReads();
        try (Socket slow = new Socket()) {
            slow.setReceiveBufferSize(16 * 1024);
            slow.connect(new InetSocketAddress("127.0.0.1", port));
            byte[] body = keys(keys);
            OutputStream out = slow.getOutputStream();
            out.write(("POST /v0/entities/get HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            InputStream in = slow.getInputStream();
            assertThat(in.readNBytes(1024)).as("the answer has begun").hasSize(1024);

            // The reads run ahead of the client only by what the socket buffers and the stream's two groups hold.
            await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> true);
            double readWhileStalled = storageReads() - readsBefore;
            assertThat(readWhileStalled).as("keys read while the client reads nothing").isLessThan(KEYS / 2.0);
            assertThat(budget.held()).isLessThanOrEqualTo(budget.limit());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);
        assertThat(storageReads() - readsBefore).as("the keys after the client hung up are not read").isLessThan(KEYS);
    }

    @Test
    void aBatchTheBudgetCannotHoldIs503AndAppliesNothing() throws Exception {
        String first = putOp("batch-large-0", filled(VALUE_BYTES, 'b'));
        String second = putOp("batch-large-1", filled(VALUE_BYTES, 'c'));

        // Two values: their body (164 KiB) and decoded values (120 KiB), beside the room for the
        // answer's buffers (about 530 KiB), are more than the budget holds.
        RawHttp.Response refused = post(port, "/v0/entities/batch", batch(first, second));

        assertThat(refused.status()).isEqualTo(503);
        assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains("kvlab.memory.max-bytes-in-flight");
        assertThat(KvClient.onPort(port).get("batch-large-0").statusCode()).isEqualTo(404);
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);

        RawHttp.Response fits = post(port, "/v0/entities/batch", batch(first));
        assertThat(fits.status()).isEqualTo(200);
        assertThat(lines(fits)).singleElement().asString().contains("\"status\":201");
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 0);
    }

    private double storageReads() {
        return registry.find("kvlab.storage.reads").functionCounters().stream().mapToDouble(FunctionCounter::count).sum();
    }

    private static byte[] filled(int size, char c) {
        byte[] bytes = new byte[size];
        Arrays.fill(bytes, (byte) c);
        return bytes;
    }
}
