package dev.kvlab.api;

import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.replication.ReplicaCount;
import dev.kvlab.replication.UnsatisfiableReplicasException;
import dev.kvlab.storage.Record;

/**
 * A request for many keys checks its {@code replicas} once, before it starts: a count the cluster
 * cannot meet is a 400 for the whole request, not the same failure for every key.
 */
final class Satisfiable {

    private Satisfiable() {
    }

    /** {@code requested}, or an {@link UnsatisfiableReplicasException} as the coordinator would throw for each key. */
    static ReplicaCount check(ReplicaCount requested, TopologyProvider topology) {
        if (requested == null) {
            return null;
        }
        int size = topology.current().size();
        if (requested.from() > size) {
            throw new UnsatisfiableReplicasException(requested, size);
        }
        if (requested.from() > Record.MAX_FROM) {
            throw new UnsatisfiableReplicasException("replicas=" + requested + ": a key is kept on at most " + Record.MAX_FROM + " replicas");
        }
        return requested;
    }
}
