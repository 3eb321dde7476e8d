package dev.kvlab.cluster;

/** Where a node learns the cluster's members. Implementations must be cheap to call on every request. */
public interface TopologyProvider {

    Topology current();
}
