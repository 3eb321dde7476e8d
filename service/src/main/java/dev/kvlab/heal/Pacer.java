package dev.kvlab.heal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;

/** Keeps background work to {@code perSecond} units (bytes, keys) on average since it began. */
final class Pacer {

    private final long perSecond;
    private final long startNanos = System.nanoTime();
    private final AtomicLong units = new AtomicLong();

    Pacer(long perSecond) {
        this.perSecond = Math.max(1, perSecond);
    }

    /** Counts {@code done} more units and waits until the rate allows them. */
    Mono<Void> after(long done) {
        long total = units.addAndGet(done);
        long dueNanos = startNanos + (long) (total * 1e9 / perSecond);
        long wait = dueNanos - System.nanoTime();
        return wait > 0 ? Mono.delay(Duration.ofNanos(wait)).then() : Mono.empty();
    }
}
