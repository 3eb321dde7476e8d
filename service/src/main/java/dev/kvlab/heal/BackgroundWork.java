package dev.kvlab.heal;

/**
 * Work a node does on its own in the background (replaying hints, repair rounds, handoff, watching
 * the topology): started once the node serves, stopped as it begins to stop
 * ({@code HealConfiguration#backgroundLifecycle}), so it neither runs before the node's servers listen nor keeps
 * the event loops busy while they shut down.
 */
public interface BackgroundWork extends AutoCloseable {

    void start();

    /** Stops the work; idempotent. */
    @Override
    void close();
}
