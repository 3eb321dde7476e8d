package dev.kvlab.replication;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Mono;

/**
 * The timers of replica call timeouts, on a hashed wheel (Netty's {@link HashedWheelTimer}). Nearly
 * every such timer is cancelled within milliseconds, when its answer comes. Arming and cancelling a
 * wheel timer only queues it for the wheel's thread, which wakes once per tick; {@link Mono#delay}
 * on Reactor's parallel scheduler instead woke that scheduler's thread for almost every call, and
 * on a small virtual machine a thread woken on the other CPU costs tens of microseconds. A timeout
 * fires up to one tick late.
 */
public final class TimeoutTimer implements AutoCloseable {

    /** Timers armed and not yet fired or cancelled; beyond it arming one fails the call. */
    static final long MAX_PENDING = 1 << 20;

    private final HashedWheelTimer wheel;

    public TimeoutTimer(Duration tick) {
        wheel = new HashedWheelTimer(new DefaultThreadFactory("kvlab-timeouts", true),
                tick.toNanos(), TimeUnit.NANOSECONDS, 512, false, MAX_PENDING);
    }

    /** Emits once {@code duration} has passed since subscription; cancelling the subscription disarms it. */
    public Mono<Long> after(Duration duration) {
        long nanos = duration.toNanos();
        return Mono.create(sink -> {
            Timeout timer = wheel.newTimeout(fired -> sink.success(0L), nanos, TimeUnit.NANOSECONDS);
            sink.onDispose(timer::cancel);
        });
    }

    /**
     * {@code call}, failed with a {@link TimeoutException} that names {@code what} when it has not
     * answered within {@code limit}. The error is a fallback because, without one, Reactor describes
     * the operator chain for its own message at every subscription: strings built for every replica
     * call (about 5 % of a node's allocations under PUT load), to be read only when one times out.
     */
    public <T> Mono<T> bound(Mono<T> call, Duration limit, String what) {
        return call.timeout(after(limit), Mono.error(() -> new TimeoutException(what + " did not answer within " + limit.toMillis() + " ms")));
    }

    /** Timers armed and not yet fired or cancelled. */
    long pending() {
        return wheel.pendingTimeouts();
    }

    /** Stops the wheel; timers still armed never fire, and arming a new one fails. */
    @Override
    public void close() {
        wheel.stop();
    }
}
