package dev.kvlab.backup;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Backups as the management endpoint shows them, in JSON's shapes. */
public final class BackupReports {

    private BackupReports() {
    }

    /** A backup just taken, as {@code POST /actuator/kvlab/backup} answers it. */
    public static Map<String, Object> taken(BackupCoordinator.Result result) {
        ClusterManifest manifest = result.manifest();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("backup", manifest.name());
        report.put("target", result.where());
        report.put("startedAt", time(manifest.cutMillis()));
        report.put("finishedAt", time(manifest.finishedMillis()));
        report.put("durationMillis", manifest.finishedMillis() - manifest.cutMillis());
        report.put("keys", manifest.nodes().stream().mapToLong(ClusterManifest.Part::keys).sum());
        report.put("bytes", manifest.nodes().stream().mapToLong(ClusterManifest.Part::bytes).sum());
        report.put("uploadedBytes", manifest.nodes().stream().mapToLong(ClusterManifest.Part::uploadedBytes).sum());
        report.put("nodes", manifest.nodes().stream().map(part -> {
            Map<String, Object> node = new LinkedHashMap<>();
            node.put("index", part.index());
            node.put("node", part.node());
            node.put("keys", part.keys());
            node.put("bytes", part.bytes());
            node.put("uploadedBytes", part.uploadedBytes());
            node.put("files", part.files());
            node.put("durationMillis", part.durationMillis());
            return node;
        }).toList());
        report.put("guarantee", manifest.guarantee());
        return report;
    }

    /** This node's backups, for {@code GET /actuator/kvlab}. */
    public static Map<String, Object> status(String target, BackupStatus status) {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("target", target);
        BackupStatus.Running running = status.running();
        if (running == null) {
            report.put("running", null);
        } else {
            Map<String, Object> now = new LinkedHashMap<>();
            now.put("backup", running.backup());
            now.put("startedAt", time(running.startedMillis()));
            now.put("coordinating", running.coordinating());
            report.put("running", now);
        }
        BackupStatus.Part last = status.last();
        if (last == null) {
            report.put("last", null);
        } else {
            Map<String, Object> part = new LinkedHashMap<>();
            part.put("backup", last.backup());
            part.put("startedAt", time(last.startedMillis()));
            part.put("finishedAt", time(last.finishedMillis()));
            part.put("durationMillis", last.durationMillis());
            part.put("bytes", last.bytes());
            part.put("uploadedBytes", last.uploadedBytes());
            part.put("keys", last.keys());
            part.put("where", last.where());
            part.put("outcome", last.outcome());
            part.put("error", last.error());
            report.put("last", part);
        }
        return report;
    }

    /** The complete backups, newest first, for {@code GET /actuator/kvlab/backups}. */
    public static List<Map<String, Object>> list(List<ClusterManifest> backups) {
        return backups.stream().map(backup -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("backup", backup.name());
            entry.put("startedAt", time(backup.cutMillis()));
            entry.put("nodes", backup.topology().size());
            entry.put("keys", backup.nodes().stream().mapToLong(ClusterManifest.Part::keys).sum());
            entry.put("bytes", backup.nodes().stream().mapToLong(ClusterManifest.Part::bytes).sum());
            return entry;
        }).toList();
    }

    /** A failure's body: {@code {"error": why}}. */
    public static Map<String, Object> error(String why) {
        return Map.of("error", why == null ? "unknown" : why);
    }

    private static String time(long millis) {
        return Instant.ofEpochMilli(millis).toString();
    }
}
