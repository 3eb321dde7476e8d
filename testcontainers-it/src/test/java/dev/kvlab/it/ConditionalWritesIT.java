package dev.kvlab.it;

import static dev.kvlab.it.history.HistoryAssertions.assertNoViolationsWithPausedNodes;
import static dev.kvlab.it.history.HistoryAssertions.readEverythingBack;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.history.ConditionalWrite;
import dev.kvlab.it.history.ConditionalWriteChecker;
import dev.kvlab.it.history.History;
import dev.kvlab.it.history.Operation;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * Read-modify-write clients on a few keys at 2/3 (GET, then PUT with {@code If-Match} the tag it
 * read, or {@code If-None-Match: *} when the key is absent) while a node is paused and resumed,
 * checked as the documentation promises: a conditional PUT that passes never skipped a write
 * acknowledged before it began (the condition is checked against a quorum read), a 412 names the
 * key's current tag, and no acknowledged write is lost ({@link ConditionalWriteChecker}, then the
 * history checker on the same run).
 */
@Testcontainers
class ConditionalWritesIT {

    private static final Logger log = LoggerFactory.getLogger(ConditionalWritesIT.class);
    private static final Pattern TAG_IN_MESSAGE = Pattern.compile("ETag (\"[0-9a-f]+-[0-9a-f]+\")");

    static final int KEYS = 4;
    static final int CLIENTS = 6;
    static final String REPLICAS = "2/3";
    static final int PAUSED = 1;

    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3).withSetting("kvlab.replication.timeout", "2s");

    @AfterEach
    void everyNodeRunning() {
        if (Boolean.TRUE.equals(cluster.node(PAUSED).getCurrentContainerInfo().getState().getPaused())) {
            cluster.unpauseNode(PAUSED);
        }
    }

    @Test
    void conditionalUpdatesUnderAPausedNodeNeverPassOnAStaleTag() throws Exception {
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        List<String> keys = IntStream.range(0, KEYS).mapToObj(k -> "conditional-" + run + "-" + k).toList();
        // Requests through the paused node get no answer: the client gives up on them as unknown.
        List<KvClient> nodes = cluster.clients().stream().map(client -> client.withTimeout(Duration.ofSeconds(3))).toList();
        History history = new History();
        ConcurrentLinkedQueue<ConditionalWrite> writes = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);

        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            int client = c;
            clients.add(Thread.ofPlatform().name("conditional-" + c).start(() -> {
                Random random = new Random(client);
                for (int n = 0; n < 3_000 && running.get(); n++) {
                    readModifyWrite(nodes, history, writes, client, random.nextInt(nodes.size()), keys.get(random.nextInt(KEYS)),
                            "c" + client + "-" + n);
                }
            }));
        }
        Thread.sleep(Duration.ofSeconds(3));
        cluster.pauseNode(PAUSED);
        Thread.sleep(Duration.ofSeconds(5));
        cluster.unpauseNode(PAUSED);
        Thread.sleep(Duration.ofSeconds(3));
        running.set(false);
        for (Thread client : clients) {
            client.join(Duration.ofSeconds(30));
        }

        List<ConditionalWrite> all = List.copyOf(writes);
        long passed = all.stream().filter(write -> write.written() && !ConditionalWrite.CREATE.equals(write.condition())).count();
        long refused = all.stream().filter(ConditionalWrite::refused).count();
        long unanswered = all.stream().filter(write -> !write.written() && !write.refused()).count();
        log.info("{} conditional PUTs: {} passed on If-Match, {} refused with 412, {} not acknowledged", all.size(), passed, refused, unanswered);
        assertThat(passed).as("If-Match PUTs answered 201").isGreaterThanOrEqualTo(50);
        assertThat(refused).as("PUTs refused with 412: the clients did race").isGreaterThanOrEqualTo(5);
        assertThat(unanswered + history.count(Operation.Type.GET, Operation.Outcome.UNKNOWN))
                .as("requests left without an answer while node %d was paused", PAUSED).isPositive();
        assertThat(all).as("every answer is 201, 412 or no acknowledgement (504, 503, none)")
                .allMatch(write -> write.written() || write.refused() || write.status() == ConditionalWrite.NO_ANSWER
                        || write.status() == 504 || write.status() == 503);

        assertThat(new ConditionalWriteChecker().violations(all)).as("conditional write violations among %d", all.size()).isEmpty();

        all.stream().filter(write -> !write.refused()).map(ConditionalWrite::asOperation).forEach(history::record);
        readEverythingBack(history, cluster.clients(), keys, REPLICAS);
        assertNoViolationsWithPausedNodes(history);
    }

    /** GET, then a PUT conditional on what it found; both recorded. */
    private static void readModifyWrite(List<KvClient> nodes, History history, ConcurrentLinkedQueue<ConditionalWrite> writes,
                                        int client, int node, String key, String value) {
        KvClient coordinator = nodes.get(node);
        long start = history.now();
        HttpResponse<byte[]> read;
        try {
            read = coordinator.get(key, REPLICAS);
        } catch (RuntimeException e) {
            history.record(new Operation(client, node, Operation.Type.GET, key, null, start, history.now(), Operation.Outcome.UNKNOWN,
                    e.getClass().getSimpleName()));
            return;
        }
        int status = read.statusCode();
        boolean answered = status == 200 || status == 404;
        history.record(new Operation(client, node, Operation.Type.GET, key, status == 200 ? KvClient.text(read) : null, start,
                history.now(), answered ? Operation.Outcome.OK : Operation.Outcome.UNKNOWN, Integer.toString(status)));
        if (!answered) {
            return;
        }
        String condition = status == 200
                ? read.headers().firstValue("ETag").orElseThrow(() -> new AssertionError("a 200 without an ETag: " + key))
                : ConditionalWrite.CREATE;
        String header = status == 200 ? "If-Match" : "If-None-Match";
        long writeStart = history.now();
        try {
            HttpResponse<byte[]> written = coordinator.putIf(key, value, REPLICAS, header, condition);
            long end = history.now();
            String tag = switch (written.statusCode()) {
                case 201 -> written.headers().firstValue("ETag").orElse(null);
                case 412 -> currentTag(written);
                default -> null;
            };
            writes.add(new ConditionalWrite(client, node, key, value, condition, written.statusCode(), tag, writeStart, end));
        } catch (RuntimeException e) {
            writes.add(new ConditionalWrite(client, node, key, value, condition, ConditionalWrite.NO_ANSWER, null, writeStart, history.now()));
        }
    }

    /** The key's current tag as a 412 names it: its ETag header if it has one, else the tag its message quotes. */
    private static String currentTag(HttpResponse<byte[]> refused) {
        return refused.headers().firstValue("ETag").orElseGet(() -> {
            Matcher matcher = TAG_IN_MESSAGE.matcher(KvClient.text(refused));
            return matcher.find() ? matcher.group(1) : null;
        });
    }
}
