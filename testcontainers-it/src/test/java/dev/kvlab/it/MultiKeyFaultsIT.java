package dev.kvlab.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
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
 * Multi-gets and batches at 2/3 while a node is killed in the middle of them: through the killed
 * node and through a survivor. Whatever part of an answer arrives is well formed and true: each
 * line answers the key asked at its place, a 200 carries the value written, a key never written is
 * never found, a stream cut short ends with a broken connection and never looks complete; and
 * every batch operation reported 201 or 202 is found (or found deleted) by a quorum read afterwards.
 *
 * <p>Values are large (24 KiB) so that a multi-get takes longer than the kernel's socket buffers
 * can absorb, and its client reads slowly: the kill lands while the killed node still streams.
 */
@Testcontainers
class MultiKeyFaultsIT {

    private static final Logger log = LoggerFactory.getLogger(MultiKeyFaultsIT.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    static final int READ_KEYS = 600;
    /** One key never written after every this many written ones, in the multi-get's list. */
    static final int ABSENT_EVERY = 10;
    static final int VALUE_BYTES = 24 * 1024;
    static final int BATCH_OPS = 200;
    static final int BATCH_VALUE_BYTES = 8 * 1024;
    static final int KILLED = 2;
    static final Set<Integer> ANSWER_STATUSES = Set.of(200, 404, 503, 504, 507);

    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3).withSetting("kvlab.replication.timeout", "5s");

    @AfterEach
    void everyNodeRunning() {
        cluster.startStoppedNodes();
    }

    @Test
    void multiGetsAndBatchesCutByAKilledNodeAnswerOnlyTheTruthAndLoseNoAcknowledgedWrite() throws Exception {
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        List<String> written = IntStream.range(0, READ_KEYS).mapToObj(i -> String.format("multi-%s-r-%04d", run, i)).toList();
        List<String> asked = new ArrayList<>();
        Set<String> absent = new HashSet<>();
        for (int i = 0; i < READ_KEYS; i++) {
            asked.add(written.get(i));
            if (i % ABSENT_EVERY == ABSENT_EVERY - 1) {
                String never = String.format("multi-%s-n-%04d", run, i);
                asked.add(never);
                absent.add(never);
            }
        }
        // Two batches of puts (new keys) and deletes (written keys), one through the node to be killed.
        List<List<Op>> batches = List.of(batchOps(run, 0), batchOps(run, 1));
        List<String> toDelete = batches.stream().flatMap(List::stream).filter(op -> op.value == null).map(Op::key).toList();

        for (int from = 0; from < READ_KEYS; from += 100) {
            batchPut(cluster.client(0), written.subList(from, Math.min(READ_KEYS, from + 100)), MultiKeyFaultsIT::readValue);
        }
        batchPut(cluster.client(0), toDelete, key -> "to delete " + key);

        AtomicInteger linesThroughKilled = new AtomicInteger();
        var throughKilled = CompletableFuture.supplyAsync(() -> multiGet(cluster.client(KILLED), asked, linesThroughKilled));
        var throughSurvivor = CompletableFuture.supplyAsync(() -> multiGet(cluster.client(0), asked, new AtomicInteger()));
        var batchThroughKilled = CompletableFuture.supplyAsync(() -> batch(cluster.client(KILLED), batches.get(0)));
        var batchThroughSurvivor = CompletableFuture.supplyAsync(() -> batch(cluster.client(1), batches.get(1)));

        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (linesThroughKilled.get() < 50) {
            assertThat(System.nanoTime()).as("the multi-get through node %d answered %d lines", KILLED, linesThroughKilled.get())
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
        cluster.killNode(KILLED);

        Answer killed = throughKilled.get();
        Answer survivor = throughSurvivor.get();
        log.info("multi-get through the killed node: {} of {} lines, {}; through a survivor: {} lines, {}", killed.lines.size(), asked.size(),
                killed.complete ? "complete" : "cut: " + killed.cut, survivor.lines.size(), survivor.complete ? "complete" : "cut: " + survivor.cut);
        assertTrue(asked, absent, killed, "node " + KILLED);
        assertTrue(asked, absent, survivor, "node 0");
        assertThat(killed.complete).as("the multi-get through node %d, killed after its 50th line", KILLED).isFalse();
        assertThat(survivor.complete).as("the multi-get through node 0, which stayed up").isTrue();

        Answer batchKilled = batchThroughKilled.get();
        Answer batchSurvivor = batchThroughSurvivor.get();
        log.info("batch through the killed node: {} of {} lines, {}; through a survivor: {} lines, {}", batchKilled.lines.size(), BATCH_OPS,
                batchKilled.complete ? "complete" : "cut: " + batchKilled.cut, batchSurvivor.lines.size(),
                batchSurvivor.complete ? "complete" : "cut: " + batchSurvivor.cut);
        assertThat(batchSurvivor.complete).as("the batch through node 1, which stayed up").isTrue();
        int acknowledged = assertAcknowledgedOpsHeld(batches.get(0), batchKilled, "node " + KILLED)
                + assertAcknowledgedOpsHeld(batches.get(1), batchSurvivor, "node 1");
        assertThat(acknowledged).as("batch operations acknowledged").isGreaterThanOrEqualTo(BATCH_OPS);
    }

    /** A batch operation: a put of {@code value}, or a delete when it is null. */
    record Op(String key, String value) {

        String line() {
            return value == null
                    ? "{\"op\":\"delete\",\"key\":\"" + encode(key) + "\"}"
                    : "{\"op\":\"put\",\"key\":\"" + encode(key) + "\",\"value\":\"" + encode(value) + "\"}";
        }
    }

    /** Puts of new keys and deletes of keys written beforehand, in turn; every key of its own. */
    private static List<Op> batchOps(String run, int batch) {
        return IntStream.range(0, BATCH_OPS).mapToObj(i -> {
            String key = String.format("multi-%s-b%d-%04d", run, batch, i);
            return i % 2 == 0 ? new Op(key, fill("batch " + key, BATCH_VALUE_BYTES)) : new Op(key, null);
        }).toList();
    }

    /** What a multi-get or batch answered: its lines, and whether the stream ended as a complete one does. */
    record Answer(List<JsonNode> lines, boolean complete, String cut) {
    }

    /** Every line answers the key asked at its place, truthfully; a short answer was visibly cut. */
    private static void assertTrue(List<String> asked, Set<String> absent, Answer answer, String through) {
        assertThat(answer.lines.size()).as("lines of the multi-get through %s", through).isLessThanOrEqualTo(asked.size());
        if (answer.complete) {
            assertThat(answer.lines).as("a multi-get through %s that ended as complete answers every key", through).hasSize(asked.size());
        }
        for (int i = 0; i < answer.lines.size(); i++) {
            JsonNode line = answer.lines.get(i);
            String key = asked.get(i);
            assertThat(decode(line.get("key").asString())).as("line %d through %s answers the key asked at its place", i, through).isEqualTo(key);
            int status = line.get("status").asInt();
            assertThat(status).as("status of %s through %s: %s", key, through, line).isIn(ANSWER_STATUSES);
            if (absent.contains(key)) {
                assertThat(status).as("%s was never written; through %s: %s", key, through, line).isNotEqualTo(200);
            } else {
                assertThat(status).as("%s was written at 3/3; through %s", key, through).isNotEqualTo(404);
            }
            if (status == 200) {
                assertThat(decode(line.get("value").asString())).as("the value of %s through %s", key, through).isEqualTo(readValue(key));
            }
        }
    }

    /**
     * Every operation the batch's answer acknowledged (201, 202) holds afterwards, read at 2/3
     * through both survivors: the put's value, or nothing after a delete. The count acknowledged.
     */
    private static int assertAcknowledgedOpsHeld(List<Op> ops, Answer answer, String through) {
        int acknowledged = 0;
        for (int i = 0; i < answer.lines.size(); i++) {
            JsonNode line = answer.lines.get(i);
            Op op = ops.get(i);
            assertThat(decode(line.get("key").asString())).as("batch line %d through %s answers its operation", i, through).isEqualTo(op.key);
            int status = line.get("status").asInt();
            assertThat(status).as("batch line %d through %s: %s", i, through, line).isIn(op.value == null ? Set.of(202, 503, 504, 507)
                    : Set.of(201, 503, 504, 507));
            if (status == 201 || status == 202) {
                acknowledged++;
                for (int node = 0; node < 2; node++) {
                    HttpResponse<byte[]> read = cluster.client(node).get(op.key, "2/3");
                    if (op.value == null) {
                        assertThat(read.statusCode()).as("%s deleted (202) by a batch through %s, read through node %d", op.key, through, node)
                                .isEqualTo(404);
                    } else {
                        assertThat(read.statusCode()).as("%s written (201) by a batch through %s, read through node %d", op.key, through, node)
                                .isEqualTo(200);
                        assertThat(KvClient.text(read)).isEqualTo(op.value);
                    }
                }
            }
        }
        return acknowledged;
    }

    /**
     * The multi-get of {@code keys} at 2/3 as NDJSON, read slowly (a line every 5 ms: 3 s at least
     * for the whole, far longer than a kill takes), counting its lines as they come.
     */
    private static Answer multiGet(KvClient client, List<String> keys, AtomicInteger lines) {
        String body = keys.stream().collect(Collectors.joining("\n", "", "\n"));
        return readLines(() -> client.withTimeout(Duration.ofSeconds(30)).stream("POST", "/v0/entities/get?replicas=2/3",
                HttpRequest.BodyPublishers.ofString(body), "Accept", "application/x-ndjson"), lines, Duration.ofMillis(5));
    }

    /** The batch of {@code ops} at 2/3, its answer read slowly as well. */
    private static Answer batch(KvClient client, List<Op> ops) {
        String body = ops.stream().map(Op::line).collect(Collectors.joining("\n", "", "\n"));
        return readLines(() -> client.withTimeout(Duration.ofSeconds(30)).stream("POST", "/v0/entities/batch?replicas=2/3",
                HttpRequest.BodyPublishers.ofString(body), "Content-Type", "application/x-ndjson"), new AtomicInteger(), Duration.ofMillis(2));
    }

    private interface StreamedRequest {
        HttpResponse<InputStream> send();
    }

    /**
     * The answer's NDJSON lines until it ends; complete when the chunked body ended with its last
     * chunk, cut (with the reason) when the connection broke first, or no answer came.
     */
    private static Answer readLines(StreamedRequest request, AtomicInteger count, Duration perLine) {
        List<JsonNode> lines = new ArrayList<>();
        HttpResponse<InputStream> response;
        try {
            response = request.send();
        } catch (UncheckedIOException e) {
            return new Answer(lines, false, "no answer: " + e.getMessage());
        }
        assertThat(response.statusCode()).as("status of %s", response.request().uri()).isEqualTo(200);
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(JSON.readTree(line));
                count.incrementAndGet();
                Thread.sleep(perLine);
            }
            return new Answer(lines, true, null);
        } catch (IOException e) {
            return new Answer(lines, false, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Writes each key's value ({@code value}) with a batch at 3/3 until every operation is
     * acknowledged: a cluster that just started on a busy machine may miss the replica timeout on
     * its first writes, and writing the same values again is harmless here.
     */
    private static void batchPut(KvClient client, List<String> keys, Function<String, String> value) {
        String body = keys.stream().map(key -> new Op(key, value.apply(key)).line()).collect(Collectors.joining("\n", "", "\n"));
        Map<Integer, Long> statuses = Map.of();
        for (int attempt = 0; attempt < 3 && !statuses.equals(Map.of(201, (long) keys.size())); attempt++) {
            HttpResponse<byte[]> response = client.withTimeout(Duration.ofSeconds(60)).send("POST", "/v0/entities/batch?replicas=3/3",
                    HttpRequest.BodyPublishers.ofString(body), "Content-Type", "application/x-ndjson");
            assertThat(response.statusCode()).as("batch of %d puts: %s", keys.size(), KvClient.text(response)).isEqualTo(200);
            statuses = KvClient.text(response).lines().map(JSON::readTree)
                    .collect(Collectors.groupingBy(line -> line.get("status").asInt(), Collectors.counting()));
        }
        assertThat(statuses).as("statuses of a batch of %d puts at 3/3", keys.size()).isEqualTo(Map.of(201, (long) keys.size()));
    }

    /** The value a read key was written with: its own name repeated to 24 KiB. */
    private static String readValue(String key) {
        return fill(key + ":", VALUE_BYTES);
    }

    private static String fill(String seed, int bytes) {
        return seed.repeat(bytes / seed.length() + 1).substring(0, bytes);
    }

    private static String encode(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(String base64) {
        return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
    }
}
