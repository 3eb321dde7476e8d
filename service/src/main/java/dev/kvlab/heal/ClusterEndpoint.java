package dev.kvlab.heal;

import dev.kvlab.backup.BackupCatalog;
import dev.kvlab.backup.BackupCoordinator;
import dev.kvlab.backup.BackupFailure;
import dev.kvlab.backup.BackupReports;
import dev.kvlab.backup.BackupStatus;
import dev.kvlab.backup.BackupThread;
import dev.kvlab.backup.ConfiguredTarget;
import dev.kvlab.cluster.Topology;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;
import reactor.core.publisher.Mono;

/**
 * {@code /actuator/kvlab} on the management port: the cluster as this node sees it (members, the
 * topology before the last change), hints pending per peer, the last repair round with each peer,
 * and records moving. {@code POST /actuator/kvlab/repair} asks for a round with every peer now;
 * {@code POST /actuator/kvlab/leave} makes this node hand its records to the nodes that stay (all
 * others, or with {@code {"size": n}} the first {@code n} nodes: a StatefulSet shrunk to n pods).
 * {@code POST /actuator/kvlab/backup} takes a backup of the whole cluster (optionally
 * {@code {"name": "..."}}) and answers when it is complete; {@code GET /actuator/kvlab/backups}
 * lists the complete backups in the target, newest first.
 */
@Endpoint(id = "kvlab")
public class ClusterEndpoint {

    private final TopologyHistory topology;
    private final HintStore hints;
    private final RepairService repair;
    private final Handoff handoff;
    private final HealingProperties properties;
    private final BackupCoordinator backups;
    private final BackupStatus backupStatus;
    private final ConfiguredTarget backupTarget;
    private final BackupThread backupThread;

    ClusterEndpoint(TopologyHistory topology, HintStore hints, RepairService repair, Handoff handoff, HealingProperties properties,
                    BackupCoordinator backups, BackupStatus backupStatus, ConfiguredTarget backupTarget, BackupThread backupThread) {
        this.topology = topology;
        this.hints = hints;
        this.repair = repair;
        this.handoff = handoff;
        this.properties = properties;
        this.backups = backups;
        this.backupStatus = backupStatus;
        this.backupTarget = backupTarget;
        this.backupThread = backupThread;
    }

    @ReadOperation
    public Map<String, Object> status() {
        Topology current = topology.current();
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("self", current.self());
        status.put("nodes", current.nodes());
        Map<String, Object> change = new LinkedHashMap<>();
        change.put("changedAt", time(topology.changedMillis()));
        change.put("previousNodes", topology.previousNodes());
        status.put("topology", change);
        status.put("hints", hints());
        status.put("repair", repair());
        status.put("handoff", handoff());
        status.put("backup", BackupReports.status(backupTarget.describe(), backupStatus));
        return status;
    }

    /** {@code GET /actuator/kvlab/backups}: the complete backups in the target, newest first. */
    @ReadOperation
    public Mono<WebEndpointResponse<Object>> list(@Selector String what) {
        if (!what.equals("backups")) {
            return Mono.just(new WebEndpointResponse<>(BackupReports.error("nothing named " + what + " here: backups"), 404));
        }
        return Mono.fromCallable(() -> new WebEndpointResponse<Object>(BackupReports.list(new BackupCatalog(backupTarget.get()).complete())))
                .subscribeOn(backupThread.scheduler())
                .onErrorResume(error -> Mono.just(failure(error)));
    }

    /**
     * An action: {@code repair}, {@code leave} or {@code backup}. A Mono, so that a backup is
     * answered when it is complete without holding a thread, with its own status on failure.
     */
    @WriteOperation
    public Mono<WebEndpointResponse<Object>> act(@Selector String action, @Nullable Integer size, @Nullable String name) {
        return switch (action) {
            case "backup" -> backups.backup(name)
                    .map(result -> new WebEndpointResponse<Object>(BackupReports.taken(result)))
                    .onErrorResume(error -> Mono.just(failure(error)));
            case "repair" -> {
                repair.requestAll();
                yield ok(Map.of("repair", "a round with every peer starts within a second", "peers", repair().get("peers")));
            }
            case "leave" -> {
                try {
                    handoff.leave(remaining(size));
                } catch (IllegalArgumentException e) {
                    throw new InvalidEndpointRequestException(e.getMessage(), e.getMessage());
                }
                yield ok(Map.of("leaving", leave(handoff.leaving())));
            }
            default -> throw new InvalidEndpointRequestException("no action " + action + ": repair, leave or backup", "no such action");
        };
    }

    private static Mono<WebEndpointResponse<Object>> ok(Map<String, Object> body) {
        return Mono.just(new WebEndpointResponse<>(body));
    }

    /** A backup that failed, answered with its status and {@code {"error": why}}. */
    private static WebEndpointResponse<Object> failure(Throwable error) {
        int status = error instanceof BackupFailure failure ? failure.status() : 503;
        return new WebEndpointResponse<>(BackupReports.error(error.getMessage()), status);
    }

    /** The nodes that stay when this one leaves: every other node, or the first {@code size}. */
    private List<String> remaining(Integer size) {
        Topology current = topology.current();
        if (size == null) {
            List<String> others = new ArrayList<>(current.nodes());
            others.remove(current.self());
            return others;
        }
        if (size < 1 || size >= current.size()) {
            throw new IllegalArgumentException("size must be within 1.." + (current.size() - 1) + ", was " + size);
        }
        return current.nodes().subList(0, size);
    }

    private Map<String, Object> hints() {
        Map<String, Object> byPeer = new LinkedHashMap<>();
        hints.pending().forEach((node, pending) -> {
            Map<String, Object> peer = new LinkedHashMap<>();
            peer.put("pending", pending.count());
            peer.put("bytes", pending.bytes());
            peer.put("oldest", time(pending.oldestMillis()));
            byPeer.put(node, peer);
        });
        return byPeer;
    }

    private Map<String, Object> repair() {
        Map<String, Object> byPeer = new LinkedHashMap<>();
        repair.status().forEach((node, status) -> {
            Map<String, Object> peer = new LinkedHashMap<>();
            peer.put("running", status.running());
            peer.put("lastCompleteRoundStarted", time(status.lastCompleteRoundStartedMillis()));
            PeerRepair.Round round = status.lastRound();
            if (round != null) {
                Map<String, Object> last = new LinkedHashMap<>();
                last.put("started", time(round.startedMillis()));
                last.put("finished", time(round.finishedMillis()));
                last.put("complete", round.complete());
                last.put("outcome", round.outcome());
                last.put("bucketsDiffering", round.bucketsDiffering());
                last.put("bucketsByChangedKeys", round.bucketsByChangedKeys());
                last.put("keysCompared", round.keysCompared());
                last.put("recordsSent", round.recordsSent());
                last.put("recordsReceived", round.recordsReceived());
                last.put("recordsRead", round.recordsRead());
                peer.put("lastRound", last);
            } else {
                peer.put("lastRound", null);
            }
            byPeer.put(node, peer);
        });
        Map<String, Object> repairStatus = new LinkedHashMap<>();
        repairStatus.put("enabled", properties.repair().enabled());
        repairStatus.put("interval", properties.repair().interval().toString());
        repairStatus.put("peers", byPeer);
        return repairStatus;
    }

    private Map<String, Object> handoff() {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("running", sweep(handoff.running()));
        status.put("lastSweep", sweep(handoff.last()));
        status.put("leaving", leave(handoff.leaving()));
        status.put("recordsMovedAway", handoff.moved());
        status.put("tombstonesPurged", handoff.purged());
        return status;
    }

    private static Map<String, Object> leave(Leave leave) {
        if (leave == null) {
            return null;
        }
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("remaining", leave.remaining());
        status.put("started", time(leave.startedMillis()));
        status.put("passes", leave.passes());
        status.put("lastPass", sweep(leave.lastPass()));
        return status;
    }

    private static Map<String, Object> sweep(Sweep sweep) {
        if (sweep == null) {
            return null;
        }
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("started", time(sweep.startedMillis()));
        status.put("finished", time(sweep.finishedMillis()));
        status.put("scanned", sweep.scanned());
        status.put("sent", sweep.sent());
        status.put("movedAway", sweep.movedAway());
        status.put("purged", sweep.purged());
        status.put("failed", sweep.failed());
        return status;
    }

    /** An instant in ISO form; null for 0, which means never. */
    private static String time(long millis) {
        return millis == 0 ? null : Instant.ofEpochMilli(millis).toString();
    }
}
