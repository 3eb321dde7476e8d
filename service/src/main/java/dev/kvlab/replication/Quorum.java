package dev.kvlab.replication;

import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Collects the answers of the {@code from} replicas asked in parallel. {@link #enough()} completes
 * as soon as {@code ack} have answered, or fails with {@link NotEnoughReplicasException} as soon as
 * too many have failed for that; {@link #all()} completes when every replica has answered or failed.
 * The calls are never cancelled by the quorum: the replicas that answer late still get the write.
 * Once the quorum cannot be made, it lets go of the answers it has and takes no more ({@link #all()}
 * then emits none): a failed read's values need not stay in memory while its last calls end.
 */
final class Quorum<T> {

    private final ReplicaCount count;
    private final List<T> answers = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();
    /** Answers so far, also those let go of once the quorum became hopeless. */
    private int answered;
    private boolean hopeless;
    private final Sinks.One<List<T>> enough = Sinks.one();
    private final Sinks.One<List<T>> all = Sinks.one();

    private Quorum(ReplicaCount count) {
        this.count = count;
    }

    /** Subscribes to every call now; each must emit one answer or fail (a timeout is a failure). */
    static <T> Quorum<T> collect(ReplicaCount count, List<Mono<T>> calls) {
        Quorum<T> quorum = new Quorum<>(count);
        for (Mono<T> call : calls) {
            call.switchIfEmpty(Mono.error(() -> new IllegalStateException("a replica call completed without an answer")))
                    .subscribe(quorum::answered, quorum::failed);
        }
        return quorum;
    }

    Mono<List<T>> enough() {
        return enough.asMono();
    }

    Mono<List<T>> all() {
        return all.asMono();
    }

    private void answered(T answer) {
        List<T> enoughNow = null;
        List<T> allNow = null;
        synchronized (this) {
            answered++;
            if (!hopeless) {
                answers.add(answer);
                if (answered == count.ack()) {
                    enoughNow = List.copyOf(answers);
                }
            }
            if (answered + failures.size() == count.from()) {
                allNow = List.copyOf(answers);
            }
        }
        // Emitted outside the lock: subscribers go on to answer the client on this thread.
        emit(enoughNow, allNow);
    }

    private void failed(Throwable error) {
        NotEnoughReplicasException failure = null;
        List<T> allNow = null;
        synchronized (this) {
            failures.add(error);
            if (answered < count.ack() && count.from() - failures.size() == count.ack() - 1) {
                failure = new NotEnoughReplicasException(count, answered, List.copyOf(failures));
                hopeless = true;
                answers.clear();
            }
            if (answered + failures.size() == count.from()) {
                allNow = List.copyOf(answers);
            }
        }
        if (failure != null) {
            enough.tryEmitError(failure);
        }
        emit(null, allNow);
    }

    private void emit(List<T> enoughNow, List<T> allNow) {
        if (enoughNow != null) {
            enough.tryEmitValue(enoughNow);
        }
        if (allNow != null) {
            all.tryEmitValue(allNow);
        }
    }
}
