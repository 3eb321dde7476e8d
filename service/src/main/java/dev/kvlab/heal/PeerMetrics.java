package dev.kvlab.heal;

import dev.kvlab.cluster.Topology;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The healing of each peer as Prometheus metrics, tagged {@code peer}, as {@code /actuator/kvlab}
 * shows it: the hints kept for it, and this node's last repair round with it. The gauges read the
 * live figures; which peers have them follows the topology (checked every second), so a node that
 * left the cluster leaves the metrics too.
 */
final class PeerMetrics implements BackgroundWork {

    private static final Logger log = LoggerFactory.getLogger(PeerMetrics.class);

    private final TopologyHistory topology;
    private final HintStore hints;
    private final RepairService repair;
    private final MeterRegistry registry;
    private final Map<String, List<Meter>> meters = new HashMap<>();
    private Disposable ticks;

    PeerMetrics(TopologyHistory topology, HintStore hints, RepairService repair, MeterRegistry registry) {
        this.topology = topology;
        this.hints = hints;
        this.repair = repair;
        this.registry = registry;
        follow();
    }

    @Override
    public void start() {
        ticks = Ticks.every(Duration.ofSeconds(1), () -> Mono.fromRunnable(this::follow), log, "peer metrics");
    }

    /** Gauges for every peer of the topology now, and none for a node that is no more. */
    synchronized void follow() {
        Topology current = topology.current();
        meters.entrySet().removeIf(peer -> {
            if (current.nodes().contains(peer.getKey())) {
                return false;
            }
            peer.getValue().forEach(registry::remove);
            return true;
        });
        for (String node : current.nodes()) {
            if (!node.equals(current.self())) {
                meters.computeIfAbsent(node, this::register);
            }
        }
    }

    private List<Meter> register(String peer) {
        return List.of(
                gauge("kvlab.peer.hints.pending", peer, null, "Hints kept for the peer, not replayed yet",
                        node -> hints.pendingFor(node).count()),
                gauge("kvlab.peer.hints", peer, "bytes", "Bytes of the hints kept for the peer",
                        node -> hints.pendingFor(node).bytes()),
                gauge("kvlab.peer.repair.last.complete", peer, "seconds",
                        "When the last repair round with the peer that completed began, in seconds since the epoch; 0 before any",
                        node -> repair.statusOf(node).lastCompleteRoundStartedMillis() / 1000.0),
                gauge("kvlab.peer.repair.last.keys.compared", peer, null, "Keys compared one by one in this node's last round with the peer",
                        node -> lastRound(node, PeerRepair.Round::keysCompared)),
                Gauge.builder("kvlab.peer.repair.last.records", peer, node -> lastRound(node, PeerRepair.Round::recordsSent))
                        .tags("peer", peer, "direction", "sent").strongReference(true)
                        .description("Records copied in this node's last round with the peer, by direction").register(registry),
                Gauge.builder("kvlab.peer.repair.last.records", peer, node -> lastRound(node, PeerRepair.Round::recordsReceived))
                        .tags("peer", peer, "direction", "received").strongReference(true)
                        .description("Records copied in this node's last round with the peer, by direction").register(registry));
    }

    private Gauge gauge(String name, String peer, String unit, String description, ToDoubleFunction<String> value) {
        return Gauge.builder(name, peer, value).tag("peer", peer).baseUnit(unit).strongReference(true)
                .description(description).register(registry);
    }

    private double lastRound(String node, ToDoubleFunction<PeerRepair.Round> figure) {
        PeerRepair.Round last = repair.statusOf(node).lastRound();
        return last == null ? 0 : figure.applyAsDouble(last);
    }

    @Override
    public void close() {
        if (ticks != null) {
            ticks.dispose();
        }
    }
}
