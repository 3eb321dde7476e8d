package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

class QuorumTest {

    @Test
    void succeedsAsSoonAsAckReplicasAnswer() {
        Sinks.One<String> slow = Sinks.one();
        Quorum<String> quorum = Quorum.collect(new ReplicaCount(2, 3),
                List.of(Mono.just("a"), Mono.just("b"), slow.asMono()));

        StepVerifier.create(quorum.enough()).expectNext(List.of("a", "b")).verifyComplete();
    }

    @Test
    void failsAsSoonAsAckAnswersCannotCome() {
        Sinks.One<String> neverAnswers = Sinks.one();
        Quorum<String> quorum = Quorum.collect(new ReplicaCount(2, 3),
                List.of(Mono.error(new RuntimeException("replica a refused")), Mono.error(new IllegalStateException()),
                        neverAnswers.asMono()));

        StepVerifier.create(quorum.enough())
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(NotEnoughReplicasException.class)
                        .hasMessage("only 0 of 3 replicas answered, 2 needed; 2 failed: replica a refused; IllegalStateException"))
                .verify(Duration.ofSeconds(1));
    }

    @Test
    void aQuorumThatCannotBeMadeLetsGoOfItsAnswersAndTakesNoMore() {
        Sinks.One<String> late = Sinks.one();
        Quorum<String> quorum = Quorum.collect(new ReplicaCount(3, 3),
                List.of(Mono.just("held until the quorum fails"), Mono.error(new IllegalStateException("down")), late.asMono()));

        StepVerifier.create(quorum.enough()).expectError(NotEnoughReplicasException.class).verify(Duration.ofSeconds(1));
        late.tryEmitValue("late");
        StepVerifier.create(quorum.all()).as("read repair gets nothing of a failed read").expectNext(List.of()).verifyComplete();
    }

    @Test
    void oneFailureAmongThreeStillMakesTwoOfThree() {
        Quorum<String> quorum = Quorum.collect(new ReplicaCount(2, 3),
                List.of(Mono.error(new RuntimeException("down")), Mono.just("b"), Mono.just("c")));

        StepVerifier.create(quorum.enough()).expectNext(List.of("b", "c")).verifyComplete();
    }

    @Test
    void lateReplicasAreNotCancelledAndAllAnswersAreCollected() {
        Sinks.One<String> late = Sinks.one();
        AtomicBoolean cancelled = new AtomicBoolean();
        Quorum<String> quorum = Quorum.collect(new ReplicaCount(1, 2),
                List.of(Mono.just("fast"), late.asMono().doOnCancel(() -> cancelled.set(true))));

        StepVerifier.create(quorum.enough()).expectNext(List.of("fast")).verifyComplete();
        late.tryEmitValue("late");

        StepVerifier.create(quorum.all()).expectNext(List.of("fast", "late")).verifyComplete();
        assertThat(cancelled).isFalse();
    }

    @Test
    void aCallThatAnswersNothingCountsAsAFailure() {
        Quorum<String> quorum = Quorum.collect(new ReplicaCount(1, 1), List.of(Mono.empty()));

        StepVerifier.create(quorum.enough()).expectError(NotEnoughReplicasException.class).verify(Duration.ofSeconds(1));
    }
}
