package dev.kvlab.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.NodeProcess;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An acknowledged write survives kill -9 of the node in the middle of a stream of writes. */
class CrashRecoveryIT {

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedWriteIsThereAfterKillMinus9() throws Exception {
        Path data = dir.resolve("data");
        Map<String, String> acknowledged = new ConcurrentHashMap<>();
        try (NodeProcess node = new NodeProcess(data, dir.resolve("node.log"), List.of("-Xmx256m"), List.of()).start()) {
            KvClient client = node.client();
            AtomicBoolean writing = new AtomicBoolean(true);
            AtomicInteger written = new AtomicInteger();
            ExecutorService writers = Executors.newFixedThreadPool(8);
            for (int w = 0; w < 8; w++) {
                int writer = w;
                writers.submit(() -> {
                    // Each writer owns its keys and writes each in sequence, so per key a later
                    // acknowledgement always means a newer value.
                    for (int n = 0; writing.get(); n++) {
                        String key = "crash-" + writer + "-" + (n % 64);
                        String value = "value-" + n;
                        try {
                            if (client.put(key, value).statusCode() == 201) {
                                acknowledged.put(key, value);
                                written.incrementAndGet();
                            }
                        } catch (RuntimeException connectionLost) {
                            return null;
                        }
                    }
                    return null;
                });
            }
            while (written.get() < 3000) {
                Thread.sleep(20);
            }
            node.kill();
            writing.set(false);
            writers.shutdown();
            assertThat(writers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }

        try (NodeProcess restarted = new NodeProcess(data, dir.resolve("node.log"), List.of("-Xmx256m"), List.of()).start()) {
            KvClient client = restarted.client();
            assertThat(acknowledged).hasSize(8 * 64);
            acknowledged.forEach((key, lastAcknowledged) -> {
                HttpResponse<byte[]> response = client.get(key);
                assertThat(response.statusCode()).as(key).isEqualTo(200);
                String stored = new String(response.body(), StandardCharsets.UTF_8);
                // A write in flight at the kill may have landed after the last acknowledged one: never an older one.
                assertThat(sequenceOf(stored)).as(key).isGreaterThanOrEqualTo(sequenceOf(lastAcknowledged));
            });
        }
    }

    private static int sequenceOf(String value) {
        return Integer.parseInt(value.substring("value-".length()));
    }
}
