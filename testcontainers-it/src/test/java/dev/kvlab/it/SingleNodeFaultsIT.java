package dev.kvlab.it;

import static dev.kvlab.it.fixture.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabCluster;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/** One node in a container, broken on purpose: a fresh node (and volume) for every test. */
@Testcontainers
class SingleNodeFaultsIT {

    @Container
    final KvlabCluster cluster = KvlabCluster.ofSize(1);

    @Test
    void dataSurvivesANewContainerOnTheSameVolume() {
        KvClient node = cluster.client(0);
        String firstContainer = cluster.node(0).getContainerId();
        for (int i = 0; i < 100; i++) {
            assertThat(node.put("kept-" + i, "value-" + i).statusCode()).isEqualTo(201);
        }
        node.delete("kept-13");

        cluster.recreateNode(0);

        assertThat(cluster.node(0).getContainerId()).isNotEqualTo(firstContainer);
        for (int i = 0; i < 100; i++) {
            HttpResponse<byte[]> read = node.get("kept-" + i);
            if (i == 13) {
                assertThat(read.statusCode()).as("kept-13 was deleted").isEqualTo(404);
            } else {
                assertThat(read.statusCode()).as("kept-" + i).isEqualTo(200);
                assertThat(text(read)).isEqualTo("value-" + i);
            }
        }
    }

    @Test
    void killMinus9InTheMiddleOfWritesLosesNoAcknowledgedWrite() throws Exception {
        KvClient node = cluster.client(0);
        int writers = 8;
        int keysPerWriter = 64;
        Map<String, Integer> acknowledged = new ConcurrentHashMap<>();
        AtomicInteger written = new AtomicInteger();
        AtomicBoolean writing = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        for (int w = 0; w < writers; w++) {
            int writer = w;
            pool.submit(() -> {
                // Each writer owns its keys and writes each in sequence: per key, a later
                // acknowledgement always means a newer value.
                for (int n = 0; writing.get(); n++) {
                    String key = "crash-" + writer + "-" + (n % keysPerWriter);
                    try {
                        if (node.put(key, "value-" + n).statusCode() == 201) {
                            acknowledged.put(key, n);
                            written.incrementAndGet();
                        }
                    } catch (UncheckedIOException connectionLost) {
                        return;
                    }
                }
            });
        }
        Instant deadline = Instant.now().plusSeconds(120);
        while (written.get() < 3000 && Instant.now().isBefore(deadline)) {
            Thread.sleep(20);
        }
        assertThat(written.get()).as("acknowledged writes before the kill").isGreaterThanOrEqualTo(3000);

        cluster.killNode(0);
        writing.set(false);
        pool.shutdown();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        cluster.startNode(0);

        assertThat(acknowledged).hasSize(writers * keysPerWriter);
        acknowledged.forEach((key, lastAcknowledged) -> {
            HttpResponse<byte[]> read = node.get(key);
            assertThat(read.statusCode()).as(key).isEqualTo(200);
            // A write in flight at the kill may have landed after the last acknowledged one: never an older one.
            int stored = Integer.parseInt(text(read).substring("value-".length()));
            assertThat(stored).as(key).isGreaterThanOrEqualTo(lastAcknowledged);
        });
    }

    @Test
    void aPausedNodeTimesOutAndAnswersAgainAfterUnpause() {
        KvClient node = cluster.client(0);
        assertThat(node.put("frozen", "before").statusCode()).isEqualTo(201);

        cluster.pauseNode(0);
        try {
            KvClient impatient = node.withTimeout(Duration.ofSeconds(2));
            Instant start = Instant.now();
            assertThatThrownBy(() -> impatient.get("frozen"))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasCauseInstanceOf(HttpTimeoutException.class);
            assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(5));
            assertThatThrownBy(() -> impatient.put("frozen", "during"))
                    .hasCauseInstanceOf(HttpTimeoutException.class);
        } finally {
            cluster.unpauseNode(0);
        }

        HttpResponse<byte[]> read = node.get("frozen");
        assertThat(read.statusCode()).isEqualTo(200);
        // The PUT sent while frozen was not acknowledged; it may still land once the node thaws.
        assertThat(text(read)).isIn("before", "during");
        assertThat(node.put("frozen", "after").statusCode()).isEqualTo(201);
        assertThat(text(node.get("frozen"))).isEqualTo("after");
    }

    @Test
    void aStoppedNodeDrainsAndStartsAgainWithItsData() {
        KvClient node = cluster.client(0);
        assertThat(node.put("stopped", "kept").statusCode()).isEqualTo(201);

        cluster.stopNode(0);
        assertThat(cluster.node(0).getCurrentContainerInfo().getState().getExitCodeLong())
                .as("exit code after SIGTERM: a clean shutdown")
                .isIn(0L, 143L);
        cluster.startNode(0);

        assertThat(text(node.get("stopped"))).isEqualTo("kept");
    }
}
