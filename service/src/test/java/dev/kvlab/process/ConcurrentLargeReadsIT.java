package dev.kvlab.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.NodeProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A burst of large reads on nodes with small heaps: 96 clients read six 1 MiB values at 3/3 from
 * three nodes of 128 MiB of heap each. Every node sheds what its memory budget has no room for with
 * 503 (before the budget, the same burst ran all three out of heap, and they lived on answering
 * nothing well; with values counted as their bytes rather than the heap regions they take, one
 * still did now and then); every value read is whole; and once the burst is over every node serves small keys
 * at once, and large ones as soon as the peers have finished the reads their coordinators gave up on.
 */
class ConcurrentLargeReadsIT {

    static final int VALUES = 6;
    static final int CLIENTS = 96;
    static final int READS = 600;
    static final int MIB = 1024 * 1024;
    static final List<String> HEAP_128 = List.of("-Xmx128m", "-XX:+ExitOnOutOfMemoryError");

    @TempDir
    Path dir;

    @Test
    void aBurstOfLargeReadsIsShedWith503AndLeavesEveryNodeServing() throws Exception {
        List<NodeProcess> nodes = NodeProcess.cluster(3, dir, HEAP_128);
        try {
            for (NodeProcess node : nodes) {
                node.start();
            }
            for (int i = 0; i < VALUES; i++) {
                assertThat(nodes.get(0).client().put(key(i), valueOf(i), "3/3").statusCode()).isEqualTo(201);
            }

            Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
            AtomicInteger next = new AtomicInteger();
            try (ExecutorService clients = Executors.newFixedThreadPool(CLIENTS)) {
                List<Future<?>> done = new ArrayList<>();
                for (int c = 0; c < CLIENTS; c++) {
                    done.add(clients.submit(() -> {
                        for (int read = next.getAndIncrement(); read < READS; read = next.getAndIncrement()) {
                            int value = read % VALUES;
                            HttpResponse<byte[]> response = readOrExplain(nodes, read % 3, key(value));
                            statuses.computeIfAbsent(response.statusCode(), status -> new AtomicInteger()).incrementAndGet();
                            if (response.statusCode() == 200) {
                                assertThat(response.body()).as(key(value)).isEqualTo(valueOf(value));
                            } else if (response.statusCode() == 503) {
                                assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("retry later");
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> client : done) {
                    client.get();
                }
            }
            System.out.println("[ConcurrentLargeReadsIT] " + READS + " reads of 1 MiB at 3/3 by " + CLIENTS
                    + " clients, three nodes of -Xmx128m; statuses: " + new TreeMap<>(statuses));

            assertThat(nodes).allSatisfy(node -> assertThat(node.isAlive()).as("%s is alive", node.url()).isTrue());
            // How many of these reads are served (200) rather than shed is the burst's goodput, which
            // this test does not hold to a figure: with each 1 MiB value counted as the two heap
            // regions it takes, few or none of the burst's reads at 3/3 get room on all three nodes.
            // What it holds to is that none runs a node out of heap and each answer is one of these.
            assertThat(statuses.keySet()).as("200, 503 when a node has no room, 504 when a replica is slower than the timeout")
                    .isNotEmpty().isSubsetOf(200, 503, 504);
            for (NodeProcess node : nodes) {
                KvClient client = node.client();
                assertThat(client.put("small-after-" + node.port(), "s".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
                assertThat(client.get("small-after-" + node.port(), "3/3").statusCode()).isEqualTo(200);
                assertThat(largeReadOnceRoomIsBack(client)).isEqualTo(valueOf(0));
            }
            for (int i = 0; i < 3; i++) {
                assertThat(Files.readString(dir.resolve("n" + i + ".log"))).as("node %d's log", i).doesNotContain("OutOfMemoryError");
            }
        } finally {
            for (NodeProcess node : nodes) {
                node.close();
            }
        }
    }

    /**
     * The read, or, when the node cannot be reached, a failure that says whether its process is
     * still alive and how its log ends (an OutOfMemoryError ends it with -XX:+ExitOnOutOfMemoryError).
     */
    private HttpResponse<byte[]> readOrExplain(List<NodeProcess> nodes, int node, String key) throws IOException {
        try {
            return nodes.get(node).client().get(key, "3/3");
        } catch (UncheckedIOException unreachable) {
            List<String> log = Files.readAllLines(dir.resolve("n" + node + ".log"));
            throw new AssertionError("node " + node + " (" + nodes.get(node).url() + ") could not be reached; alive: " + nodes.get(node).isAlive()
                    + "; its log ends with:\n" + String.join("\n", log.subList(Math.max(0, log.size() - 30), log.size())), unreachable);
        }
    }

    /**
     * A peer may still be reading for a burst's requests its coordinator gave up on (504): it holds
     * their values until it has answered, so a large read can find no room on it for a moment.
     */
    private static byte[] largeReadOnceRoomIsBack(KvClient client) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        HttpResponse<byte[]> response = client.get(key(0), "3/3");
        while (response.statusCode() == 503 && System.nanoTime() < deadline) {
            Thread.sleep(200);
            response = client.get(key(0), "3/3");
        }
        return response.body();
    }

    private static String key(int i) {
        return "large-read-" + i;
    }

    private static byte[] valueOf(int i) {
        return BoundedMemoryRangeIT.valueOf(key(i), MIB);
    }
}
