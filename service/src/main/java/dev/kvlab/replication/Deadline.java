package dev.kvlab.replication;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A timeout signal: emits once the duration has passed since subscription. Subscribed on a Netty
 * event loop, the timer is a task in that loop's own timer queue, which the loop checks anyway;
 * elsewhere it is a task of Reactor's parallel scheduler ({@link Mono#delay}'s timer), whose thread
 * is woken whenever a timer becomes its earliest, which on a lightly loaded node is every call.
 */
final class Deadline {

    private Deadline() {
    }

    static Mono<Long> after(Duration duration) {
        long nanos = duration.toNanos();
        return Mono.create(sink -> {
            EventExecutor loop = ThreadExecutorMap.currentExecutor();
            if (loop != null) {
                ScheduledFuture<?> timer = loop.schedule(() -> sink.success(0L), nanos, TimeUnit.NANOSECONDS);
                sink.onDispose(() -> timer.cancel(false));
            } else {
                Disposable timer = Schedulers.parallel().schedule(() -> sink.success(0L), nanos, TimeUnit.NANOSECONDS);
                sink.onDispose(timer);
            }
        });
    }
}
