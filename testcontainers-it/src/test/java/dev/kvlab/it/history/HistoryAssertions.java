package dev.kvlab.it.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** What the fault scenarios check at the end of a run. */
public final class HistoryAssertions {

    /** Versions order writes more than this apart by real time (millisecond timestamps, one shared clock). */
    public static final Duration CLOCK_RESOLUTION = Duration.ofMillis(5);
    /** How long after a fault heals the final reads may still meet 504s. */
    static final Duration HEALING = Duration.ofSeconds(30);

    private HistoryAssertions() {
    }

    /**
     * Reads every key at {@code replicas} through every node and adds the reads to the history. A
     * read that gets 504 is tried again for a while: right after a fault heals, a coordinator may
     * still hold connections to the peer that died with the fault, and each fails once.
     */
    public static void readEverythingBack(History history, List<KvClient> nodes, List<String> keys, String replicas) {
        for (int node = 0; node < nodes.size(); node++) {
            for (String key : keys) {
                history.record(finalRead(history, nodes.get(node), node, key, replicas));
            }
        }
    }

    private static Operation finalRead(History history, KvClient client, int node, String key, String replicas) {
        long deadline = System.nanoTime() + HEALING.toNanos();
        while (true) {
            long start = history.now();
            var response = client.get(key, replicas);
            long end = history.now();
            int status = response.statusCode();
            if (status == 200 || status == 404) {
                return new Operation(-1, node, Operation.Type.GET, key,
                        status == 200 ? new String(response.body(), StandardCharsets.UTF_8) : null, start, end,
                        Operation.Outcome.OK, Integer.toString(status));
            }
            assertThat(status).as("final read of %s at %s through node %d", key, replicas, node).isEqualTo(504);
            assertThat(System.nanoTime()).as("%s at %s through node %d still 504 after %s", key, replicas, node, HEALING)
                    .isLessThan(deadline);
        }
    }

    /** Fails listing every offending operation. */
    public static void assertNoViolations(History history) {
        assertNone(new HistoryChecker(CLOCK_RESOLUTION), history);
    }

    /** {@link #assertNoViolations} for a history during which nodes were paused and resumed ({@link HistoryChecker#withPausedNodes}). */
    public static void assertNoViolationsWithPausedNodes(History history) {
        assertNone(HistoryChecker.withPausedNodes(CLOCK_RESOLUTION), history);
    }

    private static void assertNone(HistoryChecker checker, History history) {
        List<String> violations = checker.violations(history.operations());
        assertThat(violations).as("violations in a history of %d operations", history.operations().size()).isEmpty();
    }
}
