package dev.kvlab.backup;

import dev.kvlab.storage.StorageException;
import dev.kvlab.storage.StorageProperties;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code java -jar kvlab-service.jar restore --backup=NAME|latest --data=DIR --nodes=N --index=I [--force]}:
 * restores one node's data directory from the backup target ({@link Restore}), before the node
 * starts. Exit codes: 0 restored, or restored already; 1 failed (the target could not be read, a
 * disk...); 2 no such backup, or bad arguments; 3 the directory holds data and {@code --force} was
 * not given; 4 the backup's files are not what its manifests say: nothing was changed.
 */
public final class RestoreCommand {

    public static final String USAGE = """
            usage: java -jar kvlab-service.jar restore --backup=NAME|latest --data=DIR --nodes=N --index=I [--force]
                     [--kvlab.backup.target=DIR|s3://bucket[/prefix]] [--kvlab.backup.s3.endpoint=URL] ...
              Restores node I (0..N-1) of a new cluster of N nodes into DIR (its kvlab.storage.dir) from a
              complete backup in the target (kvlab.backup.* settings or KVLAB_BACKUP_* variables).
              It takes the backup's nodes i with i mod N == I, checks every file's size and SHA-256,
              and changes DIR only when all of it is right. A DIR that holds data is replaced only with
              --force. DIR/.kvlab-restored names the backup restored: run again, nothing is done.
              Exit codes: 0 done, 1 failed, 2 no such backup or bad arguments, 3 DIR holds data
              (no --force), 4 the backup does not match its checksums (DIR untouched).""";

    private RestoreCommand() {
    }

    public static int run(List<String> args, Map<String, String> environment, PrintStream out, PrintStream err) {
        Restore.Request request;
        BackupProperties backup;
        StorageProperties storage;
        try {
            CommandLine line = CommandLine.parse(args, Set.of("backup", "data", "nodes", "index"), Set.of("force", "help"),
                    environment);
            if (line.flag("help")) {
                out.println(USAGE);
                return 0;
            }
            request = new Restore.Request(line.required("backup", "NAME|latest"), Path.of(line.required("data", "DIR")),
                    line.requiredInt("nodes", "the new cluster's size"), line.requiredInt("index", "this node's index"),
                    line.flag("force"));
            if (!BackupCatalog.LATEST.equals(request.backup())) {
                BackupLayout.checkedName(request.backup());
            }
            backup = line.bind("kvlab.backup", BackupProperties.class);
            storage = line.bind("kvlab.storage", StorageProperties.class);
        } catch (IllegalArgumentException e) {
            err.println("restore: " + e.getMessage());
            err.println(USAGE);
            return RestoreFailure.NO_SUCH_BACKUP;
        }
        try (BackupTarget target = BackupTargets.open(backup)) {
            out.println("restore: node " + request.index() + " of " + request.nodes() + " into " + request.data()
                    + " from backup " + request.backup() + " in " + target.describe());
            long started = System.nanoTime();
            Restore.Result result = new Restore(target, storage, line -> out.println("restore: " + line)).run(request);
            if (result.already()) {
                out.println("restore: " + request.data() + " holds backup " + result.backup() + " already (" + Restore.MARKER
                        + "): nothing to do" + (BackupCatalog.LATEST.equals(request.backup())
                        ? "; 'latest' restores a volume once: name a backup, with --force, to restore another" : ""));
                return 0;
            }
            out.println("restore: " + request.data() + " holds backup " + result.backup() + (result.parts().isEmpty()
                    ? ": none of its " + "nodes falls to node " + request.index() + " of " + request.nodes()
                    + ", which starts empty and receives its records from the others"
                    : ": its node(s) " + result.parts() + ", " + result.bytes() + " bytes checked"
                    + (result.merged() > 0 ? ", " + result.merged() + " records merged" : ""))
                    + ", in " + (System.nanoTime() - started) / 1_000_000 + " ms");
            return 0;
        } catch (RestoreFailure e) {
            err.println("restore: " + e.getMessage());
            return e.exitCode();
        } catch (IllegalArgumentException e) {
            err.println("restore: " + e.getMessage());
            return RestoreFailure.NO_SUCH_BACKUP;
        } catch (IOException | StorageException e) {
            err.println("restore: failed: " + e.getMessage());
            return 1;
        }
    }
}
