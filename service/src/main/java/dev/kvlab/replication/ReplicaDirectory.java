package dev.kvlab.replication;

import dev.kvlab.cluster.Topology;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;

/** Finds the {@link Replica} for a node name: the local store for this node, an HTTP peer for the others. */
public final class ReplicaDirectory {

    private final Replica local;
    private final Function<String, Replica> remoteFactory;
    private final ConcurrentMap<String, Replica> remotes = new ConcurrentHashMap<>();

    public ReplicaDirectory(Replica local, Function<String, Replica> remoteFactory) {
        this.local = local;
        this.remoteFactory = remoteFactory;
    }

    public Replica replicaOf(String node, Topology topology) {
        return node.equals(topology.self()) ? local : remotes.computeIfAbsent(node, remoteFactory);
    }
}
