package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.TestStores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A coordinator admits a read before its peers are asked: its own record tells what their answers
 * will take, the read's lease takes that room ahead, and a read with no room is refused at once.
 * The room goes back on every path, at once: served, failed, timed out, cancelled, refused.
 * The replicas here answer when the test says so, so each path is seen in turn.
 */
class CoordinatorAdmissionTest {

    static final byte[] KEY = TestStores.bytes("large");
    static final Record RECORD = TestStores.value(1_000, "v".repeat(10_000));
    static final long SIZE = RECORD.encoded().length;
    static final ReplicaCount ALL = new ReplicaCount(3, 3);

    final HeldReplica own = new HeldReplica("n0");
    final HeldReplica first = new HeldReplica("n1");
    final HeldReplica second = new HeldReplica("n2");

    private Coordinator coordinator(MemoryBudget budget) {
        Topology topology = new Topology(List.of("n0", "n1", "n2"), "n0");
        Map<String, Replica> peers = Map.of("n1", first, "n2", second);
        return new Coordinator(() -> topology, new ReplicaDirectory(own, peers::get), new HybridLogicalClock(0, System::currentTimeMillis, 1_000),
                new ReadRepair(4, Duration.ofSeconds(1), budget), new ReplicationMetrics(new SimpleMeterRegistry()), MissedWrites.NONE,
                PreviousOwners.NONE);
    }

    @Test
    void aReadWithNoRoomForItsPeersAnswersIsRefusedBeforeAnyPeerIsAsked() {
        MemoryBudget budget = new MemoryBudget(2 * SIZE + SIZE / 2);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        coordinator(budget).get(KEY, ALL, lease).subscribe(null, failed::set);

        assertThat(failed.get()).as("refused at once").isInstanceOf(OverBudgetException.class).hasMessageContaining("retry later");
        assertThat(first.asked() + second.asked()).as("peers asked for a read that cannot hold their answers").isZero();
        lease.release();
        assertThat(budget.held()).as("the own record given back").isZero();
    }

    @Test
    void anAdmittedReadsAnswersFindTheirRoomHoweverFullTheBudgetGetsMeanwhile() {
        MemoryBudget budget = new MemoryBudget(3 * SIZE + SIZE / 2);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        AtomicReference<Record> found = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        coordinator(budget).get(KEY, ALL, lease).subscribe(found::set, failed::set);

        MemoryBudget.Lease others = budget.lease();
        assertThat(others.tryHold(budget.limit() - budget.held())).as("other requests take what is left").isTrue();
        first.answer();
        second.answer();

        assertThat(failed.get()).isNull();
        assertThat(found.get()).isNotNull();
        assertThat(found.get().valueBytes()).isEqualTo(RECORD.valueBytes());
        lease.release();
        others.release();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aReadWhoseOwnRecordHasNoRoomForAllTheAnswersIsRefusedAndHoldsNothing() {
        MemoryBudget budget = new MemoryBudget(3 * SIZE - 1);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        coordinator(budget).get(KEY, ALL, lease).subscribe(null, failed::set);
        assertThat(failed.get()).isInstanceOf(OverBudgetException.class);
        assertThat(budget.held()).as("its own record took no room it could not use").isZero();
        assertThat(first.asked() + second.asked()).isZero();
        lease.release();
    }

    @Test
    void aReadOfAKeyWhoseLastRecordWouldNotFitIsRefusedBeforeAnythingIsRead() {
        MemoryBudget budget = new MemoryBudget(4 * SIZE);
        Coordinator coordinator = coordinator(budget);
        own.answerNow();
        first.answerNow();
        second.answerNow();
        MemoryBudget.Lease served = budget.lease();
        assertThat(coordinator.get(KEY, ALL, served).block()).isNotNull();
        served.release();
        int ownReads = own.asked();

        MemoryBudget.Lease others = budget.lease();
        others.hold(2 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        coordinator.get(KEY, ALL, lease).subscribe(null, failed::set);
        assertThat(failed.get()).isInstanceOf(OverBudgetException.class);
        assertThat(own.asked()).as("its own record not even read").isEqualTo(ownReads);
        lease.release();
        others.release();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aServedReadGivesItsRoomBackOnceItsCallerAndItsLastReplicaAreDone() {
        MemoryBudget budget = new MemoryBudget(10 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        Record found = coordinator(budget).get(KEY, new ReplicaCount(2, 3), lease).toFuture().getNow(null);
        assertThat(found).as("own record alone is not a quorum of two").isNull();
        first.answer();
        second.answer();
        lease.release();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aFailedReadGivesItsRoomBackAtOnceWithoutWaitingForItsLastReplica() {
        MemoryBudget budget = new MemoryBudget(10 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        coordinator(budget).get(KEY, ALL, lease).subscribe(null, failed::set);

        first.fail(new IllegalStateException("replica n1 broke"));
        assertThat(failed.get()).isInstanceOf(NotEnoughReplicasException.class);
        lease.release();
        assertThat(budget.held()).as("given back while n2's answer is still on its way").isZero();
        second.answer();
        assertThat(budget.held()).as("the late answer finds the lease closed and takes nothing").isZero();
    }

    @Test
    void aReadWhoseLastReplicaTimesOutGivesItsRoomBackWhenItDoes() {
        MemoryBudget budget = new MemoryBudget(10 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        AtomicReference<Record> found = new AtomicReference<>();
        coordinator(budget).get(KEY, new ReplicaCount(2, 3), lease).subscribe(found::set);
        first.answer();
        assertThat(found.get()).isNotNull();
        lease.release();
        assertThat(budget.held()).as("held for read repair until the last replica is done").isPositive();

        second.fail(new TimeoutException("replica n2 did not answer within 1s"));
        assertThat(budget.held()).isZero();
    }

    @Test
    void aCancelledReadGivesItsRoomBackAtOnce() {
        MemoryBudget budget = new MemoryBudget(10 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        own.answerNow();
        Disposable read = coordinator(budget).get(KEY, ALL, lease).subscribe();
        assertThat(budget.held()).as("its own record and room for two answers").isEqualTo(3 * SIZE);

        read.dispose();
        lease.release();
        assertThat(budget.held()).as("given back while the peers' answers are still on their way").isZero();
        first.answer();
        second.answer();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aReadCancelledBeforeItsOwnRecordCameGivesItsRoomBack() {
        MemoryBudget budget = new MemoryBudget(10 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        Disposable read = coordinator(budget).get(KEY, ALL, lease).subscribe();
        read.dispose();
        lease.release();
        own.answer();
        assertThat(first.asked() + second.asked()).as("nobody asked for a read that is gone").isZero();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aReadThatFoundNothingLeavesTheLeaseHoldingWhatComesNextForItself() {
        MemoryBudget budget = new MemoryBudget(10 * SIZE);
        MemoryBudget.Lease lease = budget.lease();
        own.absent();
        first.absent();
        second.absent();
        AtomicReference<Boolean> answered = new AtomicReference<>();
        coordinator(budget).newest(KEY, ALL, lease)
                .map(found -> true).defaultIfEmpty(false)
                .subscribe(found -> {
                    // As a conditional write does: its copies to the peers, held as the read answers.
                    answered.set(found);
                    lease.hold(2 * SIZE);
                });
        first.answer();
        second.answer();
        assertThat(answered.get()).isFalse();
        assertThat(budget.held()).as("the write's copies, not room for three of them each").isEqualTo(2 * SIZE);
        lease.release();
        assertThat(budget.held()).isZero();
    }

    /**
     * A replica that holds {@link #RECORD} and answers reads when the test says so, holding the
     * record on the read's lease first as a remote replica's answer decoder does (failing the call
     * when the lease has no room).
     */
    static final class HeldReplica implements Replica {

        private final String node;
        private final List<Sinks.One<Optional<Throwable>>> pending = new ArrayList<>();
        private boolean answerNow;
        private boolean absent;
        private int asked;

        HeldReplica(String node) {
            this.node = node;
        }

        int asked() {
            return asked;
        }

        /** Reads from now on find nothing. */
        void absent() {
            absent = true;
            answerNow = true;
        }

        /** Reads from now on are answered at once. */
        void answerNow() {
            answerNow = true;
        }

        void answer() {
            release(Optional.empty());
        }

        void fail(Throwable failure) {
            release(Optional.of(failure));
        }

        private void release(Optional<Throwable> outcome) {
            List<Sinks.One<Optional<Throwable>>> waiting = List.copyOf(pending);
            pending.clear();
            waiting.forEach(call -> call.tryEmitValue(outcome));
        }

        @Override
        public String node() {
            return node;
        }

        @Override
        public Mono<Optional<Record>> read(byte[] key, MemoryBudget.Lease lease) {
            return Mono.defer(() -> {
                asked++;
                Mono<Optional<Throwable>> outcome;
                if (answerNow) {
                    outcome = Mono.just(Optional.empty());
                } else {
                    Sinks.One<Optional<Throwable>> call = Sinks.one();
                    pending.add(call);
                    outcome = call.asMono();
                }
                return outcome.flatMap(failure -> {
                    if (failure.isPresent()) {
                        return Mono.error(failure.get());
                    }
                    if (absent) {
                        return Mono.just(Optional.<Record>empty());
                    }
                    if (!lease.tryHold(SIZE)) {
                        return Mono.error(lease.overBudget());
                    }
                    return Mono.just(Optional.of(RECORD));
                });
            });
        }

        @Override
        public Mono<Void> write(byte[] key, Record record) {
            return Mono.empty();
        }

        @Override
        public Flux<Entry> range(byte[] start, byte[] end) {
            return Flux.empty();
        }
    }
}
