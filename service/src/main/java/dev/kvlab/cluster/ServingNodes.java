package dev.kvlab.cluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The topology as listed (the static node list, or DNS), without the nodes that do not serve:
 * <ul>
 *   <li><b>Departed</b>: nodes that told this one their leave is finished. As Cassandra's gossip
 *       drops a decommissioned node from the ring once it is LEFT, such a node is out at once,
 *       rather than while DNS still shows it (for {@code kvlab.cluster.dns.shrink-after}) or until
 *       the static list changes. It is back when it says it serves again, or forgotten once the
 *       listing no longer shows it.</li>
 *   <li><b>Joining</b>: nodes that came into the listing after this node started, until they are
 *       seen to serve (their notice that they serve, or an answer to this node's probe), or
 *       {@code joinTimeout} has passed. A StatefulSet's pod is in its headless service's DNS
 *       before its process listens, and as Cassandra keeps a bootstrapping node out of the
 *       ranges it will own until it is ready, requests do not wait for a node that cannot answer
 *       yet. The time limit makes every node take a listed node in the end, so views converge.</li>
 * </ul>
 * The nodes listed when this node starts are taken as they are. Kept in memory: a node that
 * restarts takes the listing as it is.
 */
public final class ServingNodes implements TopologyProvider {

    private static final Logger log = LoggerFactory.getLogger(ServingNodes.class);

    private final TopologyProvider listed;
    private final long joinTimeoutMillis;
    private final LongSupplier millis;
    /** The nodes of the listing looked at last: a node listed now and not then is joining. */
    private List<String> known;
    /** The departed nodes, as an immutable set replaced whole, so {@link #current} reads it without a lock. */
    private volatile Set<String> departed = Set.of();
    /** The joining nodes and since when (millis), immutable and replaced whole, as {@link #departed}. */
    private volatile Map<String, Long> joining = Map.of();
    private volatile Derived derived;

    /**
     * The topology last derived, and from what: reused while none of it changed and no joining
     * node's time is up ({@code until}), as every request asks for it.
     */
    private record Derived(Topology listed, Set<String> departed, Map<String, Long> joining, long until, Topology current) {
    }

    public ServingNodes(TopologyProvider listed, Duration joinTimeout, LongSupplier millis) {
        this.listed = listed;
        this.joinTimeoutMillis = joinTimeout.toMillis();
        this.millis = millis;
        this.known = listed.current().nodes();
    }

    @Override
    public Topology current() {
        Topology all = listed.current();
        Derived last = derived;
        if (last != null && last.listed() == all && last.departed() == departed && last.joining() == joining
                && (last.until() == Long.MAX_VALUE || millis.getAsLong() < last.until())) {
            return last.current();
        }
        return derive(all);
    }

    private synchronized Topology derive(Topology all) {
        noteListing(all);
        long now = millis.getAsLong();
        timeUp(now);
        Set<String> gone = departed;
        Map<String, Long> pending = joining;
        List<String> nodes = all.nodes().stream().filter(node -> !gone.contains(node) && !pending.containsKey(node)).toList();
        Topology current = nodes.size() == all.size() ? all : new Topology(nodes, all.self());
        long until = pending.values().stream().mapToLong(since -> since + joinTimeoutMillis).min().orElse(Long.MAX_VALUE);
        derived = new Derived(all, gone, pending, until, current);
        return current;
    }

    /** Nodes new to the listing are joining; departed and joining nodes it no longer shows are forgotten. */
    private void noteListing(Topology all) {
        List<String> nodes = all.nodes();
        if (nodes.equals(known)) {
            return;
        }
        long now = millis.getAsLong();
        Map<String, Long> pending = new HashMap<>(joining);
        pending.keySet().retainAll(nodes);
        for (String node : nodes) {
            if (!known.contains(node) && !node.equals(all.self())) {
                pending.put(node, now);
                log.info("{} is listed: joining, out of the topology until it serves (at most {} ms)", node, joinTimeoutMillis);
            }
        }
        known = nodes;
        joining = Map.copyOf(pending);
        if (!nodes.containsAll(departed)) {
            departed = Set.copyOf(departed.stream().filter(nodes::contains).toList());
        }
    }

    /** Takes the joining nodes whose time is up. */
    private void timeUp(long now) {
        if (joining.values().stream().noneMatch(since -> now - since >= joinTimeoutMillis)) {
            return;
        }
        Map<String, Long> pending = new HashMap<>(joining);
        pending.entrySet().removeIf(entry -> {
            boolean up = now - entry.getValue() >= joinTimeoutMillis;
            if (up) {
                log.warn("{} was not seen to serve within {} ms of being listed: in the topology anyway", entry.getKey(), joinTimeoutMillis);
            }
            return up;
        });
        joining = Map.copyOf(pending);
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
        noteListing(all);
        if (!departed.contains(node)) {
            Set<String> next = new HashSet<>(departed);
            next.add(node);
            departed = Set.copyOf(next);
            log.info("{} has left the cluster: out of the topology at once", node);
        }
        return true;
    }

    /**
     * Takes {@code node} into the topology: it serves (again), as its notice says or its answer to
     * a probe shows. False when it is this node or not a node of the listing.
     */
    public synchronized boolean serves(String node) {
        Topology all = listed.current();
        if (node.equals(all.self()) || !all.nodes().contains(node)) {
            return false;
        }
        noteListing(all);
        if (departed.contains(node)) {
            Set<String> next = new HashSet<>(departed);
            next.remove(node);
            departed = Set.copyOf(next);
            log.info("{} has joined the cluster again", node);
        }
        if (joining.containsKey(node)) {
            Map<String, Long> pending = new HashMap<>(joining);
            long since = pending.remove(node);
            joining = Map.copyOf(pending);
            log.info("{} serves: in the topology, {} ms after it was listed", node, millis.getAsLong() - since);
        }
        return true;
    }

    /** Whether {@code node} told this one its leave is finished, and has not joined again since. */
    @Override
    public boolean hasLeft(String node) {
        return departed.contains(node);
    }

    /** The listed nodes not yet seen to serve since they came into the listing. */
    public Set<String> joining() {
        current();
        return joining.keySet();
    }

    @Override
    public void close() {
        listed.close();
    }
}
