package dev.kvlab.heal;

import java.util.List;
import org.springframework.context.SmartLifecycle;

/** Starts the node's {@link BackgroundWork} once it serves, and stops it first when the node stops. */
final class BackgroundLifecycle implements SmartLifecycle {

    private final List<BackgroundWork> work;
    private volatile boolean running;

    BackgroundLifecycle(List<BackgroundWork> work) {
        this.work = work;
    }

    @Override
    public void start() {
        work.forEach(BackgroundWork::start);
        running = true;
    }

    @Override
    public void stop() {
        work.forEach(BackgroundWork::close);
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** After the servers start (they start in lower phases), and before they drain and stop. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 256;
    }
}
