package dev.kvlab.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvClient.ReplicaRecord;
import dev.kvlab.it.fixture.KvlabCluster;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keys written with a time to live expire everywhere, with a node stopped while they expire: once
 * it is back, every expired key answers 404 at every {@code ack/from} through every node, range
 * reads leave them out, the keys written without a ttl are all there, and repair stays quiet.
 *
 * <p>The quiet repair is the point Riak's expiry stumbled on: the stopped node comes back holding
 * the expired records as they were written, while its peers have reaped theirs into tombstones.
 * Node 2 never reaps here (its reaper's interval is longer than the test), so the replicas stay in
 * that mixed state while repair rounds run between every pair; they must copy nothing.
 */
@Testcontainers
class ExpiryIT {

    private static final Logger log = LoggerFactory.getLogger(ExpiryIT.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    static final int EXPIRING = 200;
    static final int LASTING = 100;
    static final long TTL_SECONDS = 10;
    static final List<String> EVERY_REPLICAS = List.of("1/1", "1/2", "2/2", "1/3", "2/3", "3/3");
    /** The node that is stopped while the keys expire, and that never reaps during the test. */
    static final int LATE = 2;

    /**
     * Quick healing and reaping: a repair round with each peer every 2 s, a tolerated clock skew of
     * 2 s (the reaper waits that long past an expiry; the containers share the host's clock).
     */
    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3)
            .withSetting("kvlab.replication.timeout", "5s")
            .withSetting("kvlab.cluster.max-clock-skew", "2s")
            .withSetting("kvlab.heal.hints.replay-interval", "1s")
            .withSetting("kvlab.heal.repair.interval", "2s")
            .withNodeSetting(LATE, "kvlab.expiry.reap-interval", "1h");

    private final ExecutorService pool = Executors.newFixedThreadPool(6);

    @AfterEach
    void everyNodeRunning() {
        pool.shutdownNow();
        cluster.startStoppedNodes();
    }

    @Test
    void keysExpiredWhileANodeWasStoppedAreGoneEverywhereAndRepairCopiesNone() throws Exception {
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        String prefix = "expiry-" + run + "-";
        List<String> expiring = IntStream.range(0, EXPIRING).mapToObj(i -> String.format("%se-%04d", prefix, i)).toList();
        List<String> lasting = IntStream.range(0, LASTING).mapToObj(i -> String.format("%sl-%04d", prefix, i)).toList();

        // Every replica holds every write (3/3) before the node stops.
        parallel(lasting, key -> retried(() -> cluster.client(key.hashCode() & 1).put(key, "lasting " + key, "3/3")), 201);
        long firstExpiringWrite = System.nanoTime();
        parallel(expiring, key -> retried(() -> cluster.client(key.hashCode() & 1).putExpiring(key, "expiring " + key, TTL_SECONDS, "3/3")), 201);
        Map<String, String> before = rangeOf(cluster.client(0), prefix);
        assertThat(System.nanoTime() - firstExpiringWrite).as("written and read back before the first key expires")
                .isLessThan(Duration.ofSeconds(TTL_SECONDS).toNanos());
        assertThat(before).as("keys in the range before expiry").hasSize(EXPIRING + LASTING);

        cluster.stopNode(LATE);
        double[] copiedBefore = {repairRecords(0), repairRecords(1)};
        double[] comparedBefore = {keysCompared(0), keysCompared(1)};
        awaitReaped(0);
        awaitReaped(1);
        cluster.startNode(LATE);

        awaitRepairRounds(Duration.ofSeconds(60));
        double copied = repairRecords(0) - copiedBefore[0] + repairRecords(1) - copiedBefore[1] + repairRecords(LATE);
        double compared = keysCompared(0) - comparedBefore[0] + keysCompared(1) - comparedBefore[1] + keysCompared(LATE);
        log.info("since node {} stopped, repair compared {} keys one by one and copied {} records", LATE, compared, copied);

        // The mixed state repair had to see through: node 2 still holds the expired values, its peers tombstones.
        for (String key : expiring) {
            ReplicaRecord late = cluster.replica(LATE).replicaRecord(key);
            ReplicaRecord reaped = cluster.replica(0).replicaRecord(key);
            assertThat(late.tombstone()).as("%s on node %d, which does not reap: %s", key, LATE, late).isFalse();
            assertThat(late.value()).isEqualTo("expiring " + key);
            assertThat(reaped.tombstone()).as("%s on node 0, which reaped it: %s", key, reaped).isTrue();
            assertThat(reaped.version()).as("%s: the reaped tombstone keeps the write's version", key).isEqualTo(late.version());
        }
        assertThat(copied).as("records copied by repair rounds for %d expired keys", EXPIRING).isLessThanOrEqualTo(2);
        assertThat(compared).as("keys repair rounds found in differing buckets, of %d expired keys", EXPIRING).isLessThanOrEqualTo(2);

        for (int node = 0; node < 3; node++) {
            KvClient client = cluster.client(node);
            for (String replicas : EVERY_REPLICAS) {
                parallel(expiring, key -> client.get(key, replicas), 404);
                List<HttpResponse<byte[]>> reads = parallel(lasting, key -> client.get(key, replicas), 200);
                for (int i = 0; i < LASTING; i++) {
                    assertThat(KvClient.text(reads.get(i))).as("%s at %s through node %d", lasting.get(i), replicas, node)
                            .isEqualTo("lasting " + lasting.get(i));
                }
            }
            Map<String, String> range = rangeOf(client, prefix);
            assertThat(range.keySet()).as("keys in the range through node %d after expiry", node).containsExactlyElementsOf(lasting);
            lasting.forEach(key -> assertThat(range.get(key)).isEqualTo("lasting " + key));
        }
    }

    /** Each key's request, {@code pool} at a time; every answer must have {@code status}. The answers in key order. */
    private List<HttpResponse<byte[]>> parallel(List<String> keys, Function<String, HttpResponse<byte[]>> request, int status)
            throws Exception {
        List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
        for (String key : keys) {
            futures.add(pool.submit(() -> request.apply(key)));
        }
        List<HttpResponse<byte[]>> answers = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            HttpResponse<byte[]> answer = futures.get(i).get();
            assertThat(answer.statusCode()).as("%s %s: %s", answer.request().method(), answer.request().uri(), KvClient.text(answer))
                    .isEqualTo(status);
            answers.add(answer);
        }
        return answers;
    }

    /**
     * A write, sent again while it answers 504: a cluster that just started on a busy machine may
     * miss the replica timeout on its first writes. Sending the same value again is harmless here.
     */
    private static HttpResponse<byte[]> retried(Supplier<HttpResponse<byte[]>> write) {
        HttpResponse<byte[]> answer = write.get();
        for (int attempt = 1; attempt < 5 && answer.statusCode() == 504; attempt++) {
            answer = write.get();
        }
        return answer;
    }

    /** The keys from {@code prefix} on and their values, as a range read through {@code client} streams them (NDJSON). */
    private static Map<String, String> rangeOf(KvClient client, String prefix) {
        String query = "/v0/entities?start=" + prefix + "&end=" + prefix + "~";
        HttpResponse<byte[]> response = client.send("GET", query, HttpRequest.BodyPublishers.noBody(), "Accept", "application/x-ndjson");
        assertThat(response.statusCode()).as("GET %s", query).isEqualTo(200);
        Map<String, String> entries = new TreeMap<>();
        for (String line : KvClient.text(response).split("\n")) {
            if (!line.isEmpty()) {
                JsonNode entry = JSON.readTree(line);
                String previous = entries.put(decode(entry.get("key").asString()), decode(entry.get("value").asString()));
                assertThat(previous).as("a key streamed twice: %s", line).isNull();
            }
        }
        return entries;
    }

    private static String decode(String base64) {
        return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
    }

    /** Records node {@code node} copied by repair rounds, sent and received, since it started. */
    private static double repairRecords(int node) {
        return cluster.metric(node, "kvlab_repair_records_total");
    }

    /** Keys of differing buckets that node {@code node}'s repair rounds compared one by one, since it started. */
    private static double keysCompared(int node) {
        return cluster.metric(node, "kvlab_repair_keys_compared_total");
    }

    /** Waits until node {@code node} has reaped every expiring key (its reaper waits the 2 s skew past each expiry). */
    private static void awaitReaped(int node) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(TTL_SECONDS + 30).toNanos();
        double reaped;
        while ((reaped = cluster.metric(node, "kvlab_storage_expired_reaped_total")) < EXPIRING) {
            assertThat(System.nanoTime()).as("node %d reaped %s of %d expired records", node, reaped, EXPIRING).isLessThan(deadline);
            Thread.sleep(250);
        }
    }

    /**
     * Waits for two complete repair rounds of every node with each of its peers after node 2 is
     * back: node 2's counters began with its restart, its peers' are counted from now.
     */
    private static void awaitRepairRounds(Duration timeout) throws InterruptedException {
        double[] before = new double[3];
        for (int node = 0; node < 3; node++) {
            before[node] = node == LATE ? 0 : completeRounds(node);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int node = 0; node < 3; node++) {
            double rounds;
            while ((rounds = completeRounds(node) - before[node]) < 4) {
                assertThat(System.nanoTime()).as("complete repair rounds of node %d: %s", node, rounds).isLessThan(deadline);
                Thread.sleep(250);
            }
        }
    }

    private static double completeRounds(int node) {
        return cluster.metric(node, "kvlab_repair_rounds_total", "outcome=\"complete\"");
    }
}
