package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.storage.Version;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a conditional write guarantees on three nodes with one down: it is checked against a read at
 * its own {@code ack/from}, so at 2/3 it sees every write acknowledged at 2/3 before it began.
 * Hints and repair are off, so a node that was down stays stale until a read repairs it.
 */
class ConditionalWritesClusterTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "500ms",
                "kvlab.heal.hints.enabled", "false", "kvlab.heal.repair.enabled", "false"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @AfterEach
    void everyNodeBackUp() {
        for (int i = 0; i < 3; i++) {
            cluster.startNode(i);
        }
    }

    @Test
    void aTwoOfThreeConditionSeesTheLastAcknowledgedWriteThroughAStaleCoordinator() {
        String key = "stale-coordinator";
        writtenEverywhere(key, "v1");
        String first = etag(cluster.client(0).get(key, "3/3"));
        cluster.stopNode(2);
        assertThat(cluster.client(0).put(key, "v2".getBytes(), "2/3").statusCode()).isEqualTo(201);
        String second = etag(cluster.client(1).get(key, "2/3"));
        // Node 2 comes back without the second write; node 1 goes down: nodes 0 and 2 answer, 2 stale.
        cluster.startNode(2);
        cluster.stopNode(1);
        assertThat(text(KvClient.signing(cluster.replicaUrl(2), cluster.secret()).internalRecord(key)))
                .as("node 2 still has the first value only").isEqualTo("v1");

        HttpResponse<byte[]> stale = put(cluster.client(2), key, "from-v1", "2/3", "If-Match", first);
        assertThat(stale.statusCode()).as("the tag the stale replica holds is not the current one").isEqualTo(412);
        HttpResponse<byte[]> current = put(cluster.client(2), key, "from-v2", "2/3", "If-Match", second);
        assertThat(current.statusCode()).isEqualTo(201);
        assertThat(version(etag(current))).isGreaterThan(version(second));
        assertThat(text(cluster.client(0).get(key, "2/3"))).isEqualTo("from-v2");
        assertThat(put(cluster.client(0), key, "again", "2/3", "If-None-Match", "*").statusCode()).isEqualTo(412);
    }

    /**
     * Several clients increment one key by reading its value and tag, then writing the next value
     * If-Match that tag, at 2/3, while a node stops midway. The history must show that no
     * acknowledged conditional write was based on a tag older than a write acknowledged before it
     * began: a condition checked against anything less than a quorum would let such a write through.
     */
    @Test
    void noAcknowledgedConditionalWriteIsBasedOnATagOlderThanAWriteThatCompletedBeforeIt() throws Exception {
        String key = "history";
        writtenEverywhere(key, "0");
        int clients = 4;
        int rounds = 30;
        List<Operation> history = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger finished = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<?>> running = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int client = c;
            running.add(pool.submit(() -> {
                for (int round = 0; round < rounds; round++) {
                    increment(cluster.client((client + round) % 3), key).ifPresent(history::add);
                    finished.incrementAndGet();
                }
            }));
        }
        while (finished.get() < clients * rounds / 3) {
            Thread.sleep(10);
        }
        long stopped = System.nanoTime();
        cluster.stopNode(2);
        for (Future<?> client : running) {
            client.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();

        List<Operation> acknowledged = history.stream().filter(operation -> operation.status() == 201).toList();
        assertThat(acknowledged).as("increments made it").hasSizeGreaterThan(10);
        assertThat(acknowledged).as("increments made it with the node down").anyMatch(operation -> operation.started() > stopped);
        for (Operation later : acknowledged) {
            assertThat(later.written()).as("a write is newer than the value it replaced").isGreaterThan(later.base());
            for (Operation earlier : acknowledged) {
                if (earlier.ended() < later.started()) {
                    assertThat(later.base()).as("%s began after %s was acknowledged", later, earlier).isGreaterThanOrEqualTo(earlier.written());
                }
            }
        }
        assertThat(history).as("concurrent increments conflicted").anyMatch(operation -> operation.status() == 412);
        Version newest = acknowledged.stream().map(Operation::written).max(Version::compareTo).orElseThrow();
        assertThat(version(etag(cluster.client(0).get(key, "2/3")))).as("no acknowledged write is lost").isGreaterThanOrEqualTo(newest);
    }

    /** One read-then-If-Match increment; empty when a node could not be reached (the one that is down). */
    private static Optional<Operation> increment(KvClient node, String key) {
        try {
            HttpResponse<byte[]> read = node.get(key, "2/3");
            if (read.statusCode() != 200) {
                return Optional.empty();
            }
            String base = etag(read);
            long next = Long.parseLong(text(read)) + 1;
            long started = System.nanoTime();
            HttpResponse<byte[]> written = put(node, key, Long.toString(next), "2/3", "If-Match", base);
            long ended = System.nanoTime();
            Version writtenVersion = written.statusCode() == 201 ? version(etag(written)) : null;
            return Optional.of(new Operation(version(base), writtenVersion, written.statusCode(), started, ended));
        } catch (UncheckedIOException unreachable) {
            return Optional.empty();
        }
    }

    /** A conditional write as the client saw it: the tag it was conditional on, its outcome, when. */
    private record Operation(Version base, Version written, int status, long started, long ended) {
    }

    /** A 3/3 write, retried while a node just started may still be slow to answer its first calls. */
    private static void writtenEverywhere(String key, String value) {
        await().atMost(Duration.ofSeconds(20)).until(() -> cluster.client(0).put(key, value.getBytes(), "3/3").statusCode() == 201);
    }

    private static HttpResponse<byte[]> put(KvClient node, String key, String value, String replicas, String... headers) {
        return node.send("PUT", KvClient.entity(key, replicas), BodyPublishers.ofString(value, StandardCharsets.UTF_8), headers);
    }

    private static String etag(HttpResponse<byte[]> response) {
        assertThat(response.statusCode()).isIn(200, 201);
        return response.headers().firstValue("etag").orElseThrow();
    }

    /** The version a tag names: {@code "<timestamp hex>-<node hex>"}. */
    private static Version version(String etag) {
        String opaque = etag.substring(1, etag.length() - 1);
        int dash = opaque.indexOf('-');
        return new Version(Long.parseLong(opaque, 0, dash, 16), Integer.parseUnsignedInt(opaque, dash + 1, opaque.length(), 16));
    }
}
