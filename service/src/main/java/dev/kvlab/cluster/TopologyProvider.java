package dev.kvlab.cluster;

/** Where a node learns the cluster's members. Implementations must be cheap to call on every request. */
public interface TopologyProvider extends AutoCloseable {

    Topology current();

    /** Whether {@code node} has told this one its leave is finished ({@link ServingNodes}). */
    default boolean hasLeft(String node) {
        return false;
    }

    /** Stops any background refresh; nothing to do for most providers. */
    @Override
    default void close() {
    }
}
