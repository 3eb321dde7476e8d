package dev.kvlab.replication;

import dev.kvlab.storage.Version;

/**
 * A conditional write found a version further ahead of this node's clock than the cluster
 * tolerates, so no version this node can give now would be newer: the write would lose to the
 * record it was conditional on. Refused (503), to be retried later or through another node.
 */
public class ClockBehindException extends RuntimeException {

    public ClockBehindException(Version found, Version now) {
        super("the key's current version " + found + " is ahead of this node's clock (" + now
                + "), further than kvlab.cluster.max-clock-skew: retry later or through another node");
    }
}
