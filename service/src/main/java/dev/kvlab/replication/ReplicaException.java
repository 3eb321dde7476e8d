package dev.kvlab.replication;

/** A replica answered, but not with what the protocol promises. */
public class ReplicaException extends RuntimeException {

    public ReplicaException(String node, String problem) {
        super("replica " + node + " " + problem);
    }
}
