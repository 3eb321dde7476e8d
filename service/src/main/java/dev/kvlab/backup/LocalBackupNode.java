package dev.kvlab.backup;

import dev.kvlab.heal.Handoff;
import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * This node as a backup asks it, from its own coordinator or from a peer's: holds on deleting
 * moved records ({@link Handoff}) and its part ({@link NodeSnapshots}).
 */
public final class LocalBackupNode implements BackupNode {

    private final Handoff handoff;
    private final NodeSnapshots snapshots;
    private final Supplier<String> self;
    private final LongSupplier wallMillis;
    private final Duration timeout;

    public LocalBackupNode(Handoff handoff, NodeSnapshots snapshots, Supplier<String> self, LongSupplier wallMillis, Duration timeout) {
        this.handoff = handoff;
        this.snapshots = snapshots;
        this.self = self;
        this.wallMillis = wallMillis;
        this.timeout = timeout;
    }

    /** Holds until the deadline asked, but never longer than this node's own {@code kvlab.backup.timeout} from now. */
    @Override
    public Mono<Void> hold(BackupCalls.Hold hold) {
        return Mono.fromRunnable(() -> {
            long until = Math.min(hold.untilMillis(), wallMillis.getAsLong() + timeout.toMillis());
            String holding = handoff.holdDeletions(hold.backup(), until);
            if (holding != null) {
                throw BackupFailure.busy("this node is in backup " + holding + " now");
            }
        });
    }

    @Override
    public Mono<NodeManifest> snapshot(BackupCalls.Snapshot snapshot) {
        return Mono.defer(() -> {
            String me = self.get();
            String asked = snapshot.topology().get(snapshot.index());
            if (!asked.equals(me)) {
                return Mono.error(BackupFailure.busy("this node is " + me + ", not node " + snapshot.index() + " (" + asked
                        + ") of the backup's topology: the topology changed, or the node is misconfigured"));
            }
            return snapshots.take(snapshot);
        });
    }

    @Override
    public Mono<Void> release(BackupCalls.Release release) {
        return Mono.fromRunnable(() -> handoff.releaseDeletions(release.backup()));
    }
}
