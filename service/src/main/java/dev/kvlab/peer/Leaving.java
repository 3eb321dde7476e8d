package dev.kvlab.peer;

/**
 * Whether this node is leaving the cluster, handing its records to the nodes that stay
 * ({@code POST /actuator/kvlab/leave}). While it leaves, its replica side takes no copy back of a
 * record it holds already ({@link ReplicaHandler}): the other nodes, which still reckon it an owner,
 * then keep the copies its leave handed them instead of sending them back and deleting their own.
 */
@FunctionalInterface
public interface Leaving {

    boolean isLeaving();

    /** A node that never leaves. */
    Leaving NEVER = () -> false;
}
