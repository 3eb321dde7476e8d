package dev.kvlab.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.NodeProcess;
import dev.kvlab.testing.RawHttp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range over more data than a node's heap streams with backpressure: nodes limited to 64 MiB of
 * heap (and so of direct memory) serve about 200 MiB to a reader that also pauses midway, alone and
 * as a cluster of three merging their streams.
 */
class BoundedMemoryRangeIT {

    static final int LARGE = 120;              // 1 MiB values
    static final int SMALL = 20_000;           // 4 KiB values
    static final int MIB = 1024 * 1024;
    static final List<String> SMALL_HEAP = List.of("-Xmx64m", "-XX:+ExitOnOutOfMemoryError");

    @TempDir
    Path dir;

    @Test
    void aRangeLargerThanTheHeapStreamsToASlowReader() throws Exception {
        try (NodeProcess node = new NodeProcess(dir.resolve("data"), dir.resolve("node.log"), SMALL_HEAP, List.of()).start()) {
            fill(node.client(), null);
            assertStreamsEverything(node);
        }
    }

    @Test
    void aClusterRangeLargerThanEveryHeapStreamsToASlowReader() throws Exception {
        List<NodeProcess> nodes = NodeProcess.cluster(3, dir, SMALL_HEAP);
        try {
            for (NodeProcess node : nodes) {
                node.start();
            }
            // Every node holds every key, so the coordinator merges three full streams.
            fill(nodes.get(1).client(), "3/3");
            assertStreamsEverything(nodes.get(0));
            assertThat(nodes).allSatisfy(node -> assertThat(node.isAlive()).isTrue());
        } finally {
            for (NodeProcess node : nodes) {
                node.close();
            }
        }
    }

    private static void fill(KvClient client, String replicas) {
        IntStream.range(0, LARGE).parallel().forEach(i -> put(client, largeKey(i), valueOf(largeKey(i), MIB), replicas));
        IntStream.range(0, SMALL).parallel().forEach(i -> put(client, smallKey(i), valueOf(smallKey(i), 4096), replicas));
    }

    /**
     * Retries while the node has no room for another body (503), as its clients should, or a replica
     * was slower than the timeout (504: on a busy machine a 64 MiB node collects garbage often).
     */
    private static void put(KvClient client, String key, byte[] value, String replicas) {
        int status = client.put(key, value, replicas).statusCode();
        while (status == 503 || status == 504) {
            pause(Duration.ofMillis(50));
            status = client.put(key, value, replicas).statusCode();
        }
        assertThat(status).as(key).isEqualTo(201);
    }

    private static void assertStreamsEverything(NodeProcess node) throws Exception {
        AtomicInteger entries = new AtomicInteger();
        AtomicLong bytes = new AtomicLong();
        AtomicReference<String> previousKey = new AtomicReference<>("");
        RawHttp.Response response = RawHttp.stream(node.port(), "/v0/entities?start=a", chunk -> {
            int newline = indexOfNewline(chunk);
            String key = new String(chunk, 0, newline, StandardCharsets.UTF_8);
            byte[] value = Arrays.copyOfRange(chunk, newline + 1, chunk.length);
            assertThat(key).isGreaterThan(previousKey.get());
            assertThat(value).as(key).isEqualTo(valueOf(key, value.length));
            previousKey.set(key);
            bytes.addAndGet(chunk.length);
            if (entries.incrementAndGet() == 10) {
                pause(Duration.ofSeconds(3)); // the node must hold its stream, not buffer it
            }
        });

        assertThat(response.status()).isEqualTo(200);
        assertThat(entries.get()).isEqualTo(LARGE + SMALL);
        assertThat(bytes.get()).isGreaterThan(3L * 64 * MIB);
        assertThat(node.isAlive()).as("the node survived the stream").isTrue();
        assertThat(node.client().get(largeKey(0)).statusCode()).isEqualTo(200);
    }

    private static String largeKey(int i) {
        return String.format("a-large-%03d", i);
    }

    private static String smallKey(int i) {
        return String.format("b-small-%05d", i);
    }

    /** Incompressible bytes derived from the key, so the reader can check every value. */
    static byte[] valueOf(String key, int size) {
        byte[] value = new byte[size];
        new Random(key.hashCode()).nextBytes(value);
        return value;
    }

    private static int indexOfNewline(byte[] chunk) {
        for (int i = 0; i < chunk.length; i++) {
            if (chunk[i] == '\n') {
                return i;
            }
        }
        throw new AssertionError("a chunk without a newline");
    }

    private static void pause(Duration duration) {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
