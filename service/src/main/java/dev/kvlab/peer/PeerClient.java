package dev.kvlab.peer;

import dev.kvlab.replication.Replica;

/** The client end of the replica protocol: a node's replica, reached over the network. */
@FunctionalInterface
public interface PeerClient {

    /** The replica on {@code node}, a node URL of the topology. */
    Replica replicaOf(String node);
}
