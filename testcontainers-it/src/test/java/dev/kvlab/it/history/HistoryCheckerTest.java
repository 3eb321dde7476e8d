package dev.kvlab.it.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.history.Operation.Outcome;
import dev.kvlab.it.history.Operation.Type;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker on small histories whose verdict is known; times are in milliseconds. */
class HistoryCheckerTest {

    final HistoryChecker checker = new HistoryChecker(Duration.ofMillis(5));

    @Test
    void aReadOfTheLatestAcknowledgedWriteIsFine() {
        assertThat(checker.violations(List.of(
                put("k", "a", 0, 10), put("k", "b", 20, 30), get("k", "b", 40, 50)))).isEmpty();
    }

    @Test
    void aReadOfAnOlderValueAfterAnAcknowledgedWriteIsStale() {
        List<String> violations = checker.violations(List.of(
                put("k", "a", 0, 10), put("k", "b", 20, 30), get("k", "a", 40, 50)));

        assertThat(violations).singleElement().asString().contains("a stale read").contains("k=a").contains("k=b");
    }

    @Test
    void concurrentWritesMayBeSeenInEitherOrder() {
        assertThat(checker.violations(List.of(
                put("k", "a", 0, 30), put("k", "b", 10, 20), get("k", "a", 40, 50), get("k", "b", 60, 70)))).isEmpty();
    }

    @Test
    void writesCloserThanTheClockResolutionAreConcurrent() {
        assertThat(checker.violations(List.of(
                put("k", "a", 0, 10), put("k", "b", 12, 20), get("k", "a", 30, 40)))).isEmpty();
    }

    @Test
    void aDeletedValueThatComesBackIsAViolation() {
        List<String> violations = checker.violations(List.of(
                put("k", "a", 0, 10), delete("k", 20, 30), get("k", "a", 40, 50)));

        assertThat(violations).singleElement().asString().startsWith("a deleted value came back");
    }

    @Test
    void aReadThatFindsNothingAfterAnAcknowledgedWriteLostIt() {
        List<String> violations = checker.violations(List.of(put("k", "a", 0, 10), get("k", null, 20, 30)));

        assertThat(violations).singleElement().asString().startsWith("an acknowledged write was lost");
    }

    @Test
    void anUnacknowledgedWriteMayOrMayNotHaveHappened() {
        Operation failedPut = new Operation(1, 0, Type.PUT, "k", "b", ms(20), ms(30), Outcome.UNKNOWN, "504");
        Operation failedDelete = new Operation(1, 0, Type.DELETE, "j", null, ms(20), ms(30), Outcome.UNKNOWN, "504");

        assertThat(checker.violations(List.of(put("k", "a", 0, 10), failedPut, get("k", "b", 40, 50), get("k", "a", 60, 70)))).isEmpty();
        assertThat(checker.violations(List.of(put("j", "a", 0, 10), failedDelete, get("j", null, 40, 50)))).isEmpty();
    }

    @Test
    void whereNodesArePausedAnUnacknowledgedWriteMayTakeEffectAfterItsClientGaveUp() {
        // Its coordinator paused, then resumed and wrote it under a later version than the write acknowledged after it.
        Operation failedPut = new Operation(1, 0, Type.PUT, "k", "late", ms(0), ms(10), Outcome.UNKNOWN, "timeout");
        List<Operation> history = List.of(failedPut, put("k", "a", 20, 30), get("k", "late", 40, 50));

        assertThat(HistoryChecker.withPausedNodes(Duration.ofMillis(5)).violations(history)).isEmpty();
        assertThat(checker.violations(history)).as("where nodes are not paused, its version is older").singleElement().asString()
                .startsWith("a stale read");
        assertThat(checker.violations(List.of(put("k", "old", 0, 10), put("k", "a", 20, 30), get("k", "old", 40, 50))))
                .as("an acknowledged write is older than one that began after it was acknowledged").singleElement().asString()
                .startsWith("a stale read");
    }

    @Test
    void anUnacknowledgedWriteNeverCountsAsAcknowledged() {
        Operation failedPut = new Operation(1, 0, Type.PUT, "k", "b", ms(20), ms(30), Outcome.UNKNOWN, "504");

        assertThat(checker.violations(List.of(failedPut, get("k", null, 40, 50)))).isEmpty();
    }

    @Test
    void aValueNoPutWroteIsAViolation() {
        assertThat(checker.violations(List.of(get("k", "ghost", 0, 10)))).singleElement().asString().contains("no PUT wrote");
    }

    @Test
    void keysAreCheckedApart() {
        assertThat(checker.violations(List.of(put("k", "a", 0, 10), put("j", "b", 20, 30), get("k", "a", 40, 50)))).isEmpty();
    }

    private static Operation put(String key, String value, long start, long end) {
        return new Operation(1, 0, Type.PUT, key, value, ms(start), ms(end), Outcome.OK, "201");
    }

    private static Operation delete(String key, long start, long end) {
        return new Operation(1, 0, Type.DELETE, key, null, ms(start), ms(end), Outcome.OK, "202");
    }

    private static Operation get(String key, String value, long start, long end) {
        return new Operation(2, 1, Type.GET, key, value, ms(start), ms(end), Outcome.OK, value == null ? "404" : "200");
    }

    private static long ms(long millis) {
        return millis * 1_000_000;
    }
}
