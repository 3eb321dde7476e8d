package dev.kvlab.cluster;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The topology as listed (the static node list, or DNS), without the nodes that told this one
 * their leave is finished: as Cassandra's gossip drops a decommissioned node from the ring once it
 * is LEFT, such a node is out of the topology at once, rather than while DNS still shows it (for
 * {@code kvlab.cluster.dns.shrink-after}) or until the static list changes. Requests then stop
 * waiting for its answer. It is back when it tells this node it serves again (a fresh join), or
 * forgotten once the listing no longer shows it, so a later node of that name joins as any new one.
 * Kept in memory: a node that restarts takes the listing as it is.
 */
public final class DepartedNodes implements TopologyProvider {

    private static final Logger log = LoggerFactory.getLogger(DepartedNodes.class);

    private final TopologyProvider listed;
    /** The departed nodes, as an immutable set replaced whole, so {@link #current} reads it without a lock. */
    private volatile Set<String> departed = Set.of();
    private volatile Derived derived;

    /** The topology last derived, and from what: reused while neither changed, as every request asks for it. */
    private record Derived(Topology listed, Set<String> departed, Topology current) {
    }

    public DepartedNodes(TopologyProvider listed) {
        this.listed = listed;
    }

    @Override
    public Topology current() {
        Topology all = listed.current();
        Set<String> gone = departed;
        Derived last = derived;
        if (last != null && last.listed() == all && last.departed() == gone) {
            return last.current();
        }
        Set<String> out = all.nodes().containsAll(gone) ? gone : forgetUnlisted(all);
        Topology current = out.isEmpty() ? all : new Topology(all.nodes().stream().filter(node -> !out.contains(node)).toList(), all.self());
        derived = new Derived(all, out, current);
        return current;
    }

    /**
     * Takes {@code node} out of the topology: its leave is finished. False, and nothing changes,
     * when it is this node or not a node of the listing.
     */
    public synchronized boolean left(String node) {
        Topology all = listed.current();
        if (node.equals(all.self()) || !all.nodes().contains(node)) {
            return false;
        }
        if (!departed.contains(node)) {
            Set<String> next = new HashSet<>(departed);
            next.add(node);
            departed = Set.copyOf(next);
            log.info("{} has left the cluster: out of the topology at once", node);
        }
        return true;
    }

    /**
     * Takes {@code node} back into the topology: it serves again. False when it is this node or
     * not a node of the listing.
     */
    public synchronized boolean joined(String node) {
        Topology all = listed.current();
        if (node.equals(all.self()) || !all.nodes().contains(node)) {
            return false;
        }
        if (departed.contains(node)) {
            Set<String> next = new HashSet<>(departed);
            next.remove(node);
            departed = Set.copyOf(next);
            log.info("{} has joined the cluster again", node);
        }
        return true;
    }

    /** Whether {@code node} told this one its leave is finished, and has not joined again since. */
    @Override
    public boolean hasLeft(String node) {
        return departed.contains(node);
    }

    /** Forgets the departed nodes the listing no longer shows; the departed nodes it still shows. */
    private synchronized Set<String> forgetUnlisted(Topology all) {
        List<String> nodes = all.nodes();
        Set<String> kept = Set.copyOf(departed.stream().filter(nodes::contains).toList());
        if (kept.size() != departed.size()) {
            departed = kept;
        }
        return kept;
    }

    @Override
    public void close() {
        listed.close();
    }
}
