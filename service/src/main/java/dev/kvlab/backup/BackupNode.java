package dev.kvlab.backup;

import reactor.core.publisher.Mono;

/**
 * A node as a backup's coordinator asks it: this node directly, or a peer over the replica
 * protocol. Failures are {@link BackupFailure}s or the calls' own errors.
 */
public interface BackupNode {

    /** Stops the node deleting records handoff handed to their new owners, until released or {@code untilMillis}. */
    Mono<Void> hold(BackupCalls.Hold hold);

    /** Takes the node's part: its checkpoint, uploaded, and its manifest written; answers the manifest. */
    Mono<NodeManifest> snapshot(BackupCalls.Snapshot snapshot);

    /** Ends the hold. */
    Mono<Void> release(BackupCalls.Release release);
}
