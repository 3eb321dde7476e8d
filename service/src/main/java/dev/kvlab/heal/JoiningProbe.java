package dev.kvlab.heal;

import dev.kvlab.cluster.ServingNodes;
import java.time.Duration;
import java.util.function.BiFunction;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Asks the nodes that are joining ({@link ServingNodes#joining}) whether they serve, every
 * {@code interval}, and takes each into the topology as soon as it answers. A joining node also
 * says so itself when it starts ({@link MembershipNotices}); the probe does not depend on that
 * notice arriving, nor on this node's listing showing the node before the notice came.
 */
final class JoiningProbe implements BackgroundWork {

    private final ServingNodes serving;
    /** Whether a node (the first argument) answers this node (the second): true once it serves. */
    private final BiFunction<String, String, Mono<Boolean>> answers;
    private final Duration interval;
    private volatile Disposable probing;

    JoiningProbe(ServingNodes serving, BiFunction<String, String, Mono<Boolean>> answers, Duration interval) {
        this.serving = serving;
        this.answers = answers;
        this.interval = interval;
    }

    @Override
    public void start() {
        String self = serving.current().self();
        probing = Flux.interval(interval, interval)
                .onBackpressureDrop()
                .concatMap(tick -> Flux.fromIterable(serving.joining())
                        .flatMap(node -> answers.apply(node, self).filter(Boolean::booleanValue).doOnNext(served -> serving.serves(node)))
                        .then(), 1)
                .subscribe();
    }

    @Override
    public void close() {
        Disposable running = probing;
        if (running != null) {
            running.dispose();
        }
    }
}
