package dev.kvlab.heal;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The last pass of a leaving node, as it stops ({@link Handoff#lastPass}): after the client port and
 * the replica port have drained (their lifecycle phase, {@code DEFAULT_PHASE - 1024}), so the node
 * takes no more writes, and before they close and the event loops and the store go. Bounded by the
 * shutdown phase's timeout.
 */
final class LastHandover implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(LastHandover.class);

    private final Handoff handoff;
    private final Duration timeout;
    private volatile boolean running;

    LastHandover(Handoff handoff, Duration timeout) {
        this.handoff = handoff;
        this.timeout = timeout;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public void stop(Runnable callback) {
        running = false;
        handoff.lastPass()
                .timeout(timeout)
                .doFinally(signal -> callback.run())
                .subscribe(sweep -> { }, error -> log.warn("leaving: the last pass did not end: {}", error.toString()));
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** After the servers' graceful shutdown, before the web server stops ({@code DEFAULT_PHASE - 2048}). */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 1536;
    }
}
