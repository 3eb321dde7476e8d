package dev.kvlab.cluster;

import java.util.HashSet;
import java.util.List;

/**
 * The cluster as one node sees it at one moment: every node's name (its base URL) in a canonical
 * order, and which of them is this node. Immutable; a changed cluster is a new topology.
 */
public final class Topology {

    private final List<String> nodes;
    private final String self;
    private final Ownership ownership;

    public Topology(List<String> nodes, String self) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("a topology needs at least one node");
        }
        if (new HashSet<>(nodes).size() != nodes.size()) {
            throw new IllegalArgumentException("the node list names a node twice: " + nodes);
        }
        if (!nodes.contains(self)) {
            throw new IllegalArgumentException("this node (" + self + ") is not in the node list " + nodes);
        }
        this.nodes = List.copyOf(nodes);
        this.self = self;
        this.ownership = new Ownership(this.nodes);
    }

    public List<String> nodes() {
        return nodes;
    }

    public String self() {
        return self;
    }

    public int size() {
        return nodes.size();
    }

    /** The key's first {@code count} replicas, in rendezvous order. */
    public List<String> replicasFor(byte[] key, int count) {
        return ownership.replicasFor(key, count);
    }

    /** Which nodes own which keys in this topology ({@link Ownership}). */
    public Ownership ownership() {
        return ownership;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Topology that && nodes.equals(that.nodes) && self.equals(that.self);
    }

    @Override
    public int hashCode() {
        return nodes.hashCode() * 31 + self.hashCode();
    }

    @Override
    public String toString() {
        return nodes.size() + " nodes " + nodes + ", self " + self;
    }
}
