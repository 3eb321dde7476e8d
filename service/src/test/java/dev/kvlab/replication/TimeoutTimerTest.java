package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class TimeoutTimerTest {

    private static final Duration TICK = Duration.ofMillis(10);

    private final TimeoutTimer timer = new TimeoutTimer(TICK);

    @AfterEach
    void stop() {
        timer.close();
    }

    @Test
    void firesAfterItsDurationAndNotBefore() {
        long start = System.nanoTime();
        StepVerifier.create(timer.after(Duration.ofMillis(100)))
                .expectNext(0L)
                .verifyComplete();
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(100)).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void aCallThatAnswersInTimeIsNotTimedOut() {
        StepVerifier.create(Mono.delay(Duration.ofMillis(20)).timeout(timer.after(Duration.ofMillis(500))))
                .expectNext(0L)
                .verifyComplete();
    }

    @Test
    void aCallThatDoesNotAnswerIsTimedOut() {
        StepVerifier.create(Mono.never().timeout(timer.after(Duration.ofMillis(50))))
                .expectError(TimeoutException.class)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aBoundCallThatDoesNotAnswerFailsWithAMessageThatNamesIt() {
        StepVerifier.create(timer.bound(Mono.never(), Duration.ofMillis(50), "replica http://127.0.0.1:8081"))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(TimeoutException.class)
                        .hasMessage("replica http://127.0.0.1:8081 did not answer within 50 ms"))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aBoundCallThatAnswersInTimeKeepsItsAnswerAndDisarmsItsTimer() throws InterruptedException {
        StepVerifier.create(timer.bound(Mono.delay(Duration.ofMillis(20)), Duration.ofSeconds(30), "replica"))
                .expectNext(0L)
                .verifyComplete();
        awaitNoPendingTimers();
    }

    @Test
    void cancellingDisarmsTheTimer() throws InterruptedException {
        AtomicBoolean fired = new AtomicBoolean();
        Disposable subscription = timer.after(Duration.ofMillis(200)).subscribe(tick -> fired.set(true));
        assertThat(timer.pending()).isEqualTo(1);

        subscription.dispose();

        awaitNoPendingTimers();
        Thread.sleep(400);
        assertThat(fired).isFalse();
    }

    /** The wheel drops cancelled timers on its next tick. */
    private void awaitNoPendingTimers() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (timer.pending() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(TICK);
        }
        assertThat(timer.pending()).isZero();
    }

    @Test
    void aStoppedTimerFailsNewCallsInsteadOfLeavingThemWithoutATimeout() {
        timer.close();

        StepVerifier.create(timer.after(Duration.ofMillis(10)))
                .expectError(IllegalStateException.class)
                .verify(Duration.ofSeconds(2));
    }
}
