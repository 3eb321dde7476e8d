package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.replication.PreviousOwners;
import dev.kvlab.storage.LocalStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The topology this node reckons by, the one before it, and when it changed: remembered in the
 * store's {@code meta} column family, so a node restarted with another node list knows where its
 * keys lived before. Looks at the topology every second; the handoff and repair follow a change,
 * and a read of a key whose owners changed asks its previous owners too, for {@code window} after
 * a change ({@link PreviousOwners}).
 */
public final class TopologyHistory implements PreviousOwners, BackgroundWork {

    private static final Logger log = LoggerFactory.getLogger(TopologyHistory.class);
    private static final byte[] KEY = "topology".getBytes(StandardCharsets.UTF_8);

    private final TopologyProvider topology;
    private final LocalStore store;
    private final LongSupplier wallMillis;
    private final Duration window;
    private volatile State state;
    private Disposable ticks;

    /** What is remembered: the nodes now, the nodes before (null: none known) and when they changed. */
    record State(List<String> nodes, Ownership previous, long changedMillis) {

        byte[] encode() {
            String previousNodes = previous == null ? "" : String.join(",", previous.nodes());
            return (changedMillis + "\n" + String.join(",", nodes) + "\n" + previousNodes).getBytes(StandardCharsets.UTF_8);
        }

        static State decode(byte[] stored) {
            String[] lines = new String(stored, StandardCharsets.UTF_8).split("\n", -1);
            List<String> previous = lines[2].isEmpty() ? null : Arrays.asList(lines[2].split(","));
            return new State(Arrays.asList(lines[1].split(",")), previous == null ? null : new Ownership(previous), Long.parseLong(lines[0]));
        }
    }

    public TopologyHistory(TopologyProvider topology, LocalStore store, LongSupplier wallMillis, Duration window) {
        this.topology = topology;
        this.store = store;
        this.wallMillis = wallMillis;
        this.window = window;
    }

    /** Reads what the node remembers and compares it with the topology it starts with. */
    public TopologyHistory load() {
        byte[] stored = store.onStorage(rocks -> rocks.meta().get(KEY)).block();
        List<String> nodes = topology.current().nodes();
        if (stored == null) {
            // A new node, or one on a wiped volume: until repair has filled it, its peers hold its keys.
            remember(new State(nodes, null, wallMillis.getAsLong()));
        } else {
            State before = State.decode(stored);
            state = before;
            if (!before.nodes().equals(nodes)) {
                changed(before.nodes(), nodes);
            }
        }
        return this;
    }

    @Override
    public void start() {
        ticks = Ticks.every(Duration.ofSeconds(1), () -> Mono.fromRunnable(this::observe), log, "watching the topology");
    }

    /** Takes in a change of the topology, if there is one. */
    public void observe() {
        List<String> nodes = topology.current().nodes();
        List<String> before = state.nodes();
        if (!before.equals(nodes)) {
            changed(before, nodes);
        }
    }

    private void changed(List<String> before, List<String> nodes) {
        log.info("the cluster changed from {} nodes {} to {} nodes {}: records move to their new owners", before.size(), before, nodes.size(), nodes);
        remember(new State(nodes, new Ownership(before), wallMillis.getAsLong()));
    }

    /** Takes {@code next} at once, and keeps it in the store in the background. */
    private void remember(State next) {
        state = next;
        store.onStorage(rocks -> {
            rocks.meta().put(KEY, next.encode());
            return true;
        }).subscribe(stored -> { }, error -> log.warn("cannot remember the topology in the store: {}", error.toString()));
    }

    public Topology current() {
        return topology.current();
    }

    /** When the topology last changed, in milliseconds since the epoch; 0 when never, as far as this node knows. */
    public long changedMillis() {
        return state.changedMillis();
    }

    /** The nodes before the last change; empty when none is known. */
    public List<String> previousNodes() {
        Ownership previous = state.previous();
        return previous == null ? List.of() : previous.nodes();
    }

    /**
     * The key's first {@code from} nodes in the topology before the last change, within
     * {@code window} of it. When this node does not know that topology (it is new, or started on an
     * empty volume), every node of the topology now.
     */
    @Override
    public List<String> of(byte[] key, int from) {
        State now = state;
        if (wallMillis.getAsLong() - now.changedMillis() > window.toMillis()) {
            return List.of();
        }
        if (now.previous() == null) {
            return topology.current().nodes();
        }
        return now.previous().replicasFor(key, Math.min(from, now.previous().nodes().size()));
    }

    @Override
    public void close() {
        if (ticks != null) {
            ticks.dispose();
        }
    }
}
