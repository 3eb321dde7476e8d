package dev.kvlab.replication;

/** A replica answered a call, and its answer was no: the reason says why, the message in its words. */
public class ReplicaRefusedException extends ReplicaException {

    /** Why a replica refuses a call. */
    public enum Reason {
        /** The write's version is further ahead of the replica's clock than the cluster tolerates. */
        VERSION_AHEAD,
        /** The replica sheds load: its queues or memory budget are full. */
        OVERLOADED,
        /** The replica's disk is full: it stores nothing until space returns. */
        DISK_FULL,
        /** The replica failed to carry the call out. */
        FAILED
    }

    private final Reason reason;

    public ReplicaRefusedException(String node, Reason reason, String message) {
        super(node, "refused the call: " + message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
