package dev.kvlab.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.NodeProcess;
import dev.kvlab.testing.RawHttp;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SIGTERM lets in-flight requests finish, then closes RocksDB cleanly. */
class GracefulShutdownIT {

    static final int ENTRIES = 2000;

    @TempDir
    Path dir;

    @Test
    void aStreamInFlightAtSigtermCompletesAndTheDataIsThereAfterRestart() throws Exception {
        Path data = dir.resolve("data");
        Path log = dir.resolve("node.log");
        try (NodeProcess node = new NodeProcess(data, log, List.of("-Xmx128m"), List.of()).start()) {
            KvClient client = node.client();
            IntStream.range(0, ENTRIES).parallel().forEach(i ->
                    assertThat(client.put(String.format("drain-%05d", i), new byte[8192]).statusCode()).isEqualTo(201));

            AtomicInteger received = new AtomicInteger();
            RawHttp.Response response = RawHttp.stream(node.port(), "/v0/entities?start=drain-", chunk -> {
                if (received.incrementAndGet() == 100) {
                    node.signalTerminate();
                    sleep(5000); // the node shuts down while this stream is still being read
                }
            });

            assertThat(response.status()).isEqualTo(200);
            assertThat(received.get()).as("every entry of the stream in flight at SIGTERM").isEqualTo(ENTRIES);
            int exitCode = node.awaitExit();
            assertThat(exitCode).as("exit code after SIGTERM").isIn(0, 143);
        }

        try (NodeProcess restarted = new NodeProcess(data, log, List.of("-Xmx128m"), List.of()).start()) {
            assertThat(restarted.client().get("drain-01999").statusCode()).isEqualTo(200);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
