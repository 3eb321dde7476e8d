package dev.kvlab.it.history;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The conditional write checker on small histories whose verdict is known; times are in milliseconds. */
class ConditionalWriteCheckerTest {

    static final String A = "\"18d2c3a4b5c60001-1\"";
    static final String B = "\"18d2c3a4b5c70000-2\"";
    static final String C = "\"18d2c3a4b5c80000-1\"";

    final ConditionalWriteChecker checker = new ConditionalWriteChecker();

    @Test
    void aChainOfReadModifyWritesIsFine() {
        assertThat(checker.violations(List.of(
                create("a", A, 0, 10), ifMatch("b", A, 201, B, 20, 30), ifMatch("c", B, 201, C, 40, 50)))).isEmpty();
    }

    @Test
    void aWritePassingOnATagOlderThanAnAcknowledgedWriteIsAViolation() {
        List<String> violations = checker.violations(List.of(
                create("a", A, 0, 10), ifMatch("b", A, 201, B, 20, 30), ifMatch("c", A, 201, C, 40, 50)));

        assertThat(violations).singleElement().asString().startsWith("a conditional PUT passed on a stale tag").contains("k=c").contains("k=b");
    }

    @Test
    void twoWritersRacingOnTheSameTagMayBothPass() {
        assertThat(checker.violations(List.of(
                create("a", A, 0, 10), ifMatch("b", A, 201, B, 20, 40), ifMatch("c", A, 201, C, 30, 50)))).isEmpty();
    }

    @Test
    void aCreateAfterAnAcknowledgedWriteIsAViolation() {
        assertThat(checker.violations(List.of(create("a", A, 0, 10), create("b", B, 20, 30))))
                .singleElement().asString().startsWith("a create passed although the key had been written");
    }

    @Test
    void aNewTagNotNewerThanTheReplacedOneIsAViolation() {
        assertThat(checker.violations(List.of(ifMatch("b", B, 201, A, 20, 30))))
                .singleElement().asString().startsWith("a conditional PUT's new tag is not newer");
    }

    @Test
    void aRefusalMustNameAnotherCurrentTag() {
        assertThat(checker.violations(List.of(ifMatch("b", A, 412, B, 20, 30)))).isEmpty();
        assertThat(checker.violations(List.of(ifMatch("b", A, 412, A, 20, 30))))
                .singleElement().asString().startsWith("a 412 named the tag that was sent");
        assertThat(checker.violations(List.of(create("a", A, 0, 10), ifMatch("b", A, 412, null, 20, 30))))
                .singleElement().asString().startsWith("a 412 named no current tag");
        assertThat(checker.violations(List.of(ifMatch("b", A, 412, null, 20, 30)))).as("no write acknowledged before it").isEmpty();
    }

    @Test
    void aWriteThatGotNoAnswerCountsForNothing() {
        assertThat(checker.violations(List.of(
                create("a", A, 0, 10), ifMatch("b", A, ConditionalWrite.NO_ANSWER, null, 20, 30), ifMatch("c", A, 201, C, 40, 50))))
                .isEmpty();
    }

    @Test
    void nodesBreakTiesBetweenEqualTimestamps() {
        assertThat(ConditionalWriteChecker.compare("\"10-2\"", "\"10-1\"")).isPositive();
        assertThat(ConditionalWriteChecker.compare("\"10-ffffffff\"", "\"10-1\"")).as("node ids compare signed, as the service's").isNegative();
        assertThat(ConditionalWriteChecker.compare("\"11-1\"", "\"10-2\"")).isPositive();
    }

    private static ConditionalWrite create(String value, String tag, long start, long end) {
        return new ConditionalWrite(1, 0, "k", value, ConditionalWrite.CREATE, 201, tag, ms(start), ms(end));
    }

    private static ConditionalWrite ifMatch(String value, String condition, int status, String tag, long start, long end) {
        return new ConditionalWrite(2, 1, "k", value, condition, status, tag, ms(start), ms(end));
    }

    private static long ms(long millis) {
        return millis * 1_000_000;
    }
}
