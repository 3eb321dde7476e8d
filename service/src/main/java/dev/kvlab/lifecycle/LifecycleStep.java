package dev.kvlab.lifecycle;

import java.util.function.Consumer;
import org.springframework.context.SmartLifecycle;

/**
 * One step of a node's start and stop, run at its lifecycle phase: Spring starts lower phases
 * first and stops higher phases first. The phases of the node's steps, highest (stopped first)
 * to lowest:
 * <ul>
 *   <li>{@link #LEFT_NOTICE}: a node whose leave is finished tells its peers, while it still serves;</li>
 *   <li>{@link #BACKGROUND_WORK}: background work stops before anything drains;</li>
 *   <li>{@link #REPLICA_STREAMS}: coordinators' batch streams end, before the servers drain;</li>
 *   <li>{@link #SERVERS}: the client and replica ports drain and stop taking requests (Spring
 *       Boot's graceful shutdown, and the replica server);</li>
 *   <li>{@link #LAST_HANDOVER}: a leaving node's last pass, once no more writes come;</li>
 *   <li>{@code DEFAULT_PHASE - 2048}: the web server stops.</li>
 * </ul>
 */
public final class LifecycleStep implements SmartLifecycle {

    public static final int LEFT_NOTICE = SmartLifecycle.DEFAULT_PHASE - 128;
    public static final int BACKGROUND_WORK = SmartLifecycle.DEFAULT_PHASE - 256;
    public static final int REPLICA_STREAMS = SmartLifecycle.DEFAULT_PHASE - 512;
    /** Spring Boot's web server graceful shutdown phase. */
    public static final int SERVERS = SmartLifecycle.DEFAULT_PHASE - 1024;
    public static final int LAST_HANDOVER = SmartLifecycle.DEFAULT_PHASE - 1536;

    private final int phase;
    private final Runnable onStart;
    private final Consumer<Runnable> onStop;
    private volatile boolean running;

    private LifecycleStep(int phase, Runnable onStart, Consumer<Runnable> onStop) {
        this.phase = phase;
        this.onStart = onStart;
        this.onStop = onStop;
    }

    /** Runs {@code onStart} as the node starts and {@code onStop} as it stops. */
    public static LifecycleStep of(int phase, Runnable onStart, Runnable onStop) {
        return new LifecycleStep(phase, onStart, done -> {
            onStop.run();
            done.run();
        });
    }

    /** Runs {@code onStop} as the node stops. */
    public static LifecycleStep onStop(int phase, Runnable onStop) {
        return of(phase, () -> { }, onStop);
    }

    /**
     * Runs {@code onStop} as the node stops, which calls the runnable it is given once it has
     * ended: the shutdown waits for it, within the phase's timeout, without holding a thread.
     */
    public static LifecycleStep onStopAsync(int phase, Consumer<Runnable> onStop) {
        return new LifecycleStep(phase, () -> { }, onStop);
    }

    @Override
    public void start() {
        onStart.run();
        running = true;
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public void stop(Runnable callback) {
        running = false;
        onStop.accept(callback);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return phase;
    }
}
