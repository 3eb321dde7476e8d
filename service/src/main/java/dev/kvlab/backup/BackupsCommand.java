package dev.kvlab.backup;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code java -jar kvlab-service.jar backups}: the complete backups in the target, newest first,
 * one per line: name, time of its cut (UTC), nodes, records, bytes, separated by tabs. Exit codes:
 * 0 listed (maybe none), 1 the target could not be read, 2 bad arguments.
 */
public final class BackupsCommand {

    public static final String USAGE = """
            usage: java -jar kvlab-service.jar backups [--kvlab.backup.target=DIR|s3://bucket[/prefix]] ...
              Lists the complete backups in the target (kvlab.backup.* settings or KVLAB_BACKUP_*
              variables), newest first: name, time, nodes, keys, bytes.""";

    private BackupsCommand() {
    }

    public static int run(List<String> args, Map<String, String> environment, PrintStream out, PrintStream err) {
        BackupProperties properties;
        try {
            CommandLine line = CommandLine.parse(args, Set.of(), Set.of("help"), environment);
            if (line.flag("help")) {
                out.println(USAGE);
                return 0;
            }
            properties = line.bind("kvlab.backup", BackupProperties.class);
        } catch (IllegalArgumentException e) {
            err.println("backups: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        try (BackupTarget target = BackupTargets.open(properties)) {
            List<ClusterManifest> backups = new BackupCatalog(target).complete();
            if (backups.isEmpty()) {
                err.println("backups: no complete backup in " + target.describe());
            }
            for (ClusterManifest backup : backups) {
                out.println(String.join("\t", backup.name(), Instant.ofEpochMilli(backup.cutMillis()).toString(),
                        backup.topology().size() + " nodes",
                        backup.nodes().stream().mapToLong(ClusterManifest.Part::keys).sum() + " keys",
                        backup.nodes().stream().mapToLong(ClusterManifest.Part::bytes).sum() + " bytes"));
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("backups: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("backups: failed: " + e.getMessage());
            return 1;
        }
    }
}
