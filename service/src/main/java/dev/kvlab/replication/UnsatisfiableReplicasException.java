package dev.kvlab.replication;

/** The request asks for more replicas than the cluster has: a client error (400). */
public class UnsatisfiableReplicasException extends RuntimeException {

    public UnsatisfiableReplicasException(String message) {
        super(message);
    }

    public UnsatisfiableReplicasException(ReplicaCount count, int clusterSize) {
        super("replicas=" + count + " asks for " + count.from() + " replicas, but the cluster has "
                + clusterSize + (clusterSize == 1 ? " node" : " nodes"));
    }
}
