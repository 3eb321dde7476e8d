package dev.kvlab.replication;

/** Fewer than {@code ack} replicas answered in time: the request fails with 504. */
public class NotEnoughReplicasException extends RuntimeException {

    public NotEnoughReplicasException(ReplicaCount wanted, int answered) {
        super("only " + answered + " of " + wanted.from() + " replicas answered in time, " + wanted.ack() + " needed");
    }
}
