package dev.kvlab.peer;

import org.springframework.context.SmartLifecycle;

/**
 * Ends the coordinators' batch streams into this node as it starts to stop, before the servers
 * drain their requests: a stream is a request that would otherwise hold the graceful shutdown
 * until its timeout.
 */
final class ReplicaStreamsLifecycle implements SmartLifecycle {

    private final ReplicaHandler replica;
    private volatile boolean running;

    ReplicaStreamsLifecycle(ReplicaHandler replica) {
        this.replica = replica;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        replica.endStreams();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Before the web server's graceful shutdown and the replica server ({@link ReplicaServer}) stop. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 512;
    }
}
