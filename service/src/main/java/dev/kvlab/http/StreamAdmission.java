package dev.kvlab.http;

import dev.kvlab.memory.MemoryBudget;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * Admits at most {@code maxStreams} streams at once, each with a share of the node's memory budget
 * for its buffers held from its start to its end; a stream that finds either full is refused at
 * once (503), before anything of it is sent. A stream of entries holds a bounded number of them in
 * its buffers, but each may hold the largest value: the count bounds what the budget cannot see.
 */
public final class StreamAdmission {

    private final Semaphore streams;
    private final int maxStreams;
    private final long reservation;
    private final MemoryBudget budget;
    private final String what;

    /** {@code what} names the streams and the setting that bounds them, for the refusal's message. */
    public StreamAdmission(int maxStreams, long reservation, MemoryBudget budget, String what) {
        this.streams = new Semaphore(maxStreams);
        this.maxStreams = maxStreams;
        this.reservation = reservation;
        this.budget = budget;
        this.what = what;
    }

    /** The stream, if there is room for it; otherwise a {@link TooManyStreamsException} or an over-budget failure. */
    public Mono<Void> admit(Supplier<Mono<Void>> stream) {
        return Mono.defer(() -> {
            if (!streams.tryAcquire()) {
                return Mono.error(new TooManyStreamsException(maxStreams + " " + what + " are streaming from this node already; retry later"));
            }
            MemoryBudget.Lease lease = budget.lease();
            if (!lease.tryHold(reservation)) {
                streams.release();
                return Mono.error(lease.overBudget());
            }
            // Deferred, so a stream that fails before it starts gives its room back too.
            return Mono.defer(stream).doFinally(signal -> {
                lease.release();
                streams.release();
            });
        });
    }

    /** Streams running now, for tests and metrics. */
    public int running() {
        return maxStreams - streams.availablePermits();
    }
}
