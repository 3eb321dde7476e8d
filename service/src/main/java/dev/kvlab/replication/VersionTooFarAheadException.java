package dev.kvlab.replication;

import dev.kvlab.storage.Version;

/** A write whose version is further ahead of this node's clock than the cluster tolerates: a replica refuses it. */
public class VersionTooFarAheadException extends RuntimeException {

    public VersionTooFarAheadException(Version version, long aheadMillis, long maxSkewMillis) {
        super("version " + version + " is " + aheadMillis + " ms ahead of this node's clock; at most " + maxSkewMillis
                + " ms are tolerated (kvlab.cluster.max-clock-skew)");
    }
}
