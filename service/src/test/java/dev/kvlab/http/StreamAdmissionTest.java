package dev.kvlab.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

class StreamAdmissionTest {

    final MemoryBudget budget = new MemoryBudget(1000);
    final StreamAdmission admission = new StreamAdmission(2, 300, budget, "ranges (kvlab.api.max-concurrent-ranges)");

    @Test
    void streamsPastTheCountOrTheBudgetAreRefusedAndTheirRoomComesBack() {
        Sinks.Empty<Void> first = Sinks.empty();
        Sinks.Empty<Void> second = Sinks.empty();
        admission.admit(first::asMono).subscribe();
        admission.admit(second::asMono).subscribe();
        assertThat(budget.held()).isEqualTo(600);

        StepVerifier.create(admission.admit(Mono::empty))
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(TooManyStreamsException.class)
                        .hasMessage("2 ranges (kvlab.api.max-concurrent-ranges) are streaming from this node already; retry later"))
                .verify(Duration.ofSeconds(1));
        first.tryEmitEmpty();
        assertThat(admission.running()).isEqualTo(1);
        budget.lease().hold(500);
        StepVerifier.create(admission.admit(Mono::empty)).expectError(OverBudgetException.class).verify(Duration.ofSeconds(1));
        assertThat(admission.running()).as("a refused stream holds nothing").isEqualTo(1);
    }

    @Test
    void aStreamThatFailsBeforeItStartsGivesItsRoomBack() {
        for (int i = 0; i < 10; i++) {
            StepVerifier.create(admission.admit(() -> {
                throw new BadRequestException("missing query parameter 'start'");
            })).expectError(BadRequestException.class).verify(Duration.ofSeconds(1));
        }

        assertThat(admission.running()).isZero();
        assertThat(budget.held()).isZero();
    }
}
