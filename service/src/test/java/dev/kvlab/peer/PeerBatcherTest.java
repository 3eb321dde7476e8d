package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.replication.ReplicaException;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

class PeerBatcherTest {

    /** A peer that keeps every batch until the test answers it. */
    private final List<List<StoreOp>> sent = new ArrayList<>();
    private final List<Sinks.One<List<Outcome>>> answers = new ArrayList<>();
    private final List<Integer> sentSizes = new ArrayList<>();

    private PeerBatcher batcher(int maxInFlight, int maxCalls, DataSize maxBytes, int maxQueued) {
        return new PeerBatcher("http://peer", (ops, leases) -> {
            Sinks.One<List<Outcome>> answer = Sinks.one();
            sent.add(ops);
            answers.add(answer);
            return answer.asMono();
        }, new ReplicationProperties.Batch(maxInFlight, maxCalls, maxBytes, maxQueued, true, DataSize.ofBytes(0)), sentSizes::add);
    }

    @Test
    void aCallLeavesAtOnceWhenNothingIsInFlight() {
        PeerBatcher batcher = batcher(1, 64, DataSize.ofKilobytes(256), 16);

        StepVerifier.create(batcher.call(read("a"), null))
                .then(() -> {
                    assertThat(sent).hasSize(1);
                    answer(0, Optional.empty());
                })
                .expectNext(Optional.empty())
                .verifyComplete();
    }

    @Test
    void callsThatWaitedLeaveTogetherWhenTheBatchInFlightComesBack() {
        PeerBatcher batcher = batcher(1, 64, DataSize.ofKilobytes(256), 16);
        List<Optional<Record>> got = new ArrayList<>();
        batcher.call(read("first"), null).subscribe(got::add);
        batcher.call(read("second"), null).subscribe(got::add);
        batcher.call(read("third"), null).subscribe(got::add);

        assertThat(sent).hasSize(1);
        assertThat(batcher.queued()).isEqualTo(2);
        answer(0, Optional.empty());

        assertThat(sent).hasSize(2);
        assertThat(keys(sent.get(1))).containsExactly("second", "third");
        answer(1, Optional.empty(), Optional.empty());
        assertThat(got).hasSize(3);
        assertThat(sentSizes).as("calls per batch, as the metric hears them").containsExactly(1, 2);
    }

    @Test
    void batchesKeepToTheirCallAndByteLimitsAndALargerCallTravelsAlone() {
        PeerBatcher batcher = batcher(1, 2, DataSize.ofBytes(30), 16);
        batcher.call(read("busy"), null).subscribe();
        for (String key : List.of("a", "b", "c", "d-is-a-key-longer-than-the-limit", "e")) {
            batcher.call(read(key), null).subscribe();
        }

        answer(0, Optional.empty());
        assertThat(keys(sent.get(1))).as("at most two calls").containsExactly("a", "b");
        answer(1, Optional.empty(), Optional.empty());
        assertThat(keys(sent.get(2))).as("the next would pass 30 bytes").containsExactly("c");
        answer(2, Optional.empty());
        assertThat(keys(sent.get(3))).as("over the limit on its own").containsExactly("d-is-a-key-longer-than-the-limit");
    }

    @Test
    void aFullQueueFailsTheCallAtOnce() {
        PeerBatcher batcher = batcher(1, 64, DataSize.ofKilobytes(256), 1);
        batcher.call(read("in-flight"), null).subscribe();
        batcher.call(read("queued"), null).subscribe();

        StepVerifier.create(batcher.call(read("one-too-many"), null))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(java.util.concurrent.RejectedExecutionException.class)
                        .hasMessageContaining("1 calls are already waiting for this peer"))
                .verify(Duration.ofSeconds(1));
    }

    @Test
    void aFailedBatchFailsEachOfItsCallsAndTheNextBatchStillLeaves() {
        PeerBatcher batcher = batcher(1, 64, DataSize.ofKilobytes(256), 16);
        List<Throwable> failures = new ArrayList<>();
        batcher.call(read("a"), null).subscribe(answer -> { }, failures::add);
        batcher.call(read("b"), null).subscribe(answer -> { }, failures::add);
        batcher.call(read("c"), null).subscribe(answer -> { }, failures::add);

        answers.get(0).tryEmitError(new ReplicaException("http://peer", "answered 503"));
        answers.get(1).tryEmitError(new ReplicaException("http://peer", "answered 503"));
        assertThat(failures).hasSize(3).allSatisfy(error -> assertThat(error).hasMessageContaining("answered 503"));

        StepVerifier.create(batcher.call(read("d"), null))
                .then(() -> answer(2, Optional.empty()))
                .expectNext(Optional.empty())
                .verifyComplete();
    }

    @Test
    void aCallWhoseTimeoutFiredWhileItWaitedIsNotSent() {
        PeerBatcher batcher = batcher(1, 64, DataSize.ofKilobytes(256), 16);
        batcher.call(read("in-flight"), null).subscribe();
        StepVerifier.create(batcher.call(read("gives-up"), null).timeout(Duration.ofMillis(10)))
                .expectError(java.util.concurrent.TimeoutException.class)
                .verify(Duration.ofSeconds(1));
        batcher.call(read("still-waiting"), null).subscribe();

        answer(0, Optional.empty());

        assertThat(keys(sent.get(1))).containsExactly("still-waiting");
    }

    @Test
    void upToMaxInFlightBatchesTravelAtOnce() {
        PeerBatcher batcher = batcher(2, 64, DataSize.ofKilobytes(256), 16);
        batcher.call(read("a"), null).subscribe();
        batcher.call(read("b"), null).subscribe();
        batcher.call(read("c"), null).subscribe();

        assertThat(sent).hasSize(2);
        assertThat(batcher.queued()).isEqualTo(1);
    }

    /** Answers the batch's calls: a read's record or empty (absent). */
    @SafeVarargs
    private void answer(int batch, Optional<Record>... results) {
        answers.get(batch).tryEmitValue(java.util.Arrays.stream(results).map(found -> Outcome.ofRead(found.orElse(null))).toList());
    }

    private static StoreOp read(String key) {
        return new StoreOp.Read(key.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> keys(List<StoreOp> ops) {
        return ops.stream().map(op -> new String(op.key(), StandardCharsets.UTF_8)).toList();
    }
}
