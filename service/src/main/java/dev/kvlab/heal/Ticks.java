package dev.kvlab.heal;

import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Background work on a fixed period, one run at a time: a tick that comes while a run goes on is dropped. */
final class Ticks {

    private Ticks() {
    }

    /** Runs {@code work} every {@code period}; a run that fails is logged as {@code what} and the next tick tries again. */
    static Disposable every(Duration period, Supplier<Mono<Void>> work, Logger log, String what) {
        return Flux.interval(period, period, Schedulers.single())
                .onBackpressureDrop()
                .concatMap(tick -> Mono.defer(work).onErrorResume(error -> {
                    log.warn("{} failed: {}", what, error.toString());
                    return Mono.empty();
                }), 1)
                .subscribe();
    }
}
