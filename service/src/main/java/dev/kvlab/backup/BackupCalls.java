package dev.kvlab.backup;

import java.util.List;

/**
 * The replica protocol's calls of a backup, from the coordinating node to every node (itself
 * included), signed like every replica call; their bodies are small JSON.
 */
public final class BackupCalls {

    /** Hold: stop deleting records handed to their new owners ({@link Hold}); 204. */
    public static final String HOLD_PATH = "/internal/v1/backup/hold";
    /** Snapshot: take this node's part ({@link Snapshot}); 200 with its {@link NodeManifest}. */
    public static final String SNAPSHOT_PATH = "/internal/v1/backup/snapshot";
    /** Release: delete moved records again ({@link Release}); 204. */
    public static final String RELEASE_PATH = "/internal/v1/backup/release";
    /** A call's body names a backup and the nodes of a topology: a few KiB; this is far more than any. */
    public static final int MAX_BODY_BYTES = 256 * 1024;

    private BackupCalls() {
    }

    /** Hold deletions of moved records for {@code backup} until {@code untilMillis} at the latest. */
    public record Hold(String backup, long untilMillis) {
        public Hold {
            BackupLayout.checkedName(backup);
        }
    }

    /** Take node {@code index}'s part of {@code backup}, begun at {@code cutMillis} in {@code topology}. */
    public record Snapshot(String backup, long cutMillis, List<String> topology, int index) {
        public Snapshot {
            BackupLayout.checkedName(backup);
            topology = List.copyOf(topology);
            if (index < 0 || index >= topology.size()) {
                throw new IllegalArgumentException("node index " + index + " is outside a topology of " + topology.size());
            }
        }
    }

    /** End the hold of {@code backup}. */
    public record Release(String backup) {
        public Release {
            BackupLayout.checkedName(backup);
        }
    }
}
