package dev.kvlab.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.NodeProcess;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many clients writing the largest values at once to a coordinator with a small heap: it sheds
 * what its body budget has no room for with 503 instead of running out of heap and dying (before
 * the budget, 24 such writers killed a 64 MiB node). Every acknowledged write reads back whole; a
 * refused one left nothing behind.
 */
class ConcurrentLargeWritesIT {

    static final int WRITERS = 24;
    static final int WRITES_EACH = 4;
    static final int MIB = 1024 * 1024;

    @TempDir
    Path dir;

    @Test
    void aSmallHeapCoordinatorShedsConcurrentLargeWritesInsteadOfDying() throws Exception {
        List<NodeProcess> nodes = NodeProcess.cluster(3, dir, BoundedMemoryRangeIT.SMALL_HEAP);
        try {
            for (NodeProcess node : nodes) {
                node.start();
            }
            KvClient coordinator = nodes.get(1).client();
            Map<String, Integer> statuses = new ConcurrentHashMap<>();
            try (ExecutorService writers = Executors.newFixedThreadPool(WRITERS)) {
                List<Future<?>> done = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    done.add(writers.submit(() -> {
                        for (int i = 0; i < WRITES_EACH; i++) {
                            String key = "large-" + writer + "-" + i;
                            statuses.put(key, coordinator.put(key, valueOf(key), "3/3").statusCode());
                        }
                    }));
                }
                for (Future<?> writer : done) {
                    writer.get();
                }
            }

            assertThat(nodes).allSatisfy(node -> assertThat(node.isAlive()).as("%s is alive", node.url()).isTrue());
            assertThat(statuses).hasSize(WRITERS * WRITES_EACH);
            // A 504 (a replica slower than the timeout on a busy machine) is the API at work too; such
            // a write may or may not have been stored, so only 201s and 503s are read back.
            assertThat(statuses.values()).contains(201).allMatch(status -> status == 201 || status == 503 || status == 504);
            for (Map.Entry<String, Integer> write : statuses.entrySet()) {
                HttpResponse<byte[]> read = nodes.get(0).client().get(write.getKey(), "3/3");
                if (write.getValue() == 201) {
                    assertThat(read.statusCode()).as(write.getKey()).isEqualTo(200);
                    assertThat(read.body()).as(write.getKey()).isEqualTo(valueOf(write.getKey()));
                } else if (write.getValue() == 503) {
                    assertThat(read.statusCode()).as("refused %s left nothing", write.getKey()).isEqualTo(404);
                }
            }
        } finally {
            for (NodeProcess node : nodes) {
                node.close();
            }
        }
    }

    private static byte[] valueOf(String key) {
        return BoundedMemoryRangeIT.valueOf(key, MIB);
    }
}
