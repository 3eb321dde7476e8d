package dev.kvlab.cluster;

import java.util.List;

/**
 * Which nodes own a key, by rendezvous hashing over a list of nodes: a key whose newest record was
 * written at {@code from} replicas belongs to its first {@code from} nodes, or to every node when
 * the record does not say (0: written before records kept it) or asked for more than the list has.
 * The rule a read relies on: a read at the {@code replicas} a key was written with asks exactly
 * its owners.
 */
public final class Ownership {

    private final List<String> nodes;
    private final RendezvousHashing hashing;

    public Ownership(List<String> nodes) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("ownership needs at least one node");
        }
        this.nodes = List.copyOf(nodes);
        this.hashing = new RendezvousHashing(this.nodes);
    }

    public List<String> nodes() {
        return nodes;
    }

    /** The key's first {@code count} replicas, in rendezvous order. */
    public List<String> replicasFor(byte[] key, int count) {
        return hashing.replicasFor(key, count);
    }

    /** The nodes that own a key whose newest record was written at {@code from} replicas. */
    public List<String> ownersOf(byte[] key, int from) {
        return hashing.replicasFor(key, from <= 0 || from > nodes.size() ? nodes.size() : from);
    }

    /** Whether {@code node} is one of {@link #ownersOf}. */
    public boolean owns(String node, byte[] key, int from) {
        return ownersOf(key, from).contains(node);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Ownership that && nodes.equals(that.nodes);
    }

    @Override
    public int hashCode() {
        return nodes.hashCode();
    }

    @Override
    public String toString() {
        return nodes.toString();
    }
}
