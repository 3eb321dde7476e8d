package dev.kvlab.replication;

/** How many replicas must acknowledge ({@code ack}) of how many are asked ({@code from}). */
public record ReplicaCount(int ack, int from) {

    public ReplicaCount {
        if (ack < 1 || ack > from) {
            throw new IllegalArgumentException("need 1 <= ack <= from, got " + ack + "/" + from);
        }
    }

    /** The default: a majority of all {@code nodes}, asking every node. */
    public static ReplicaCount quorumOf(int nodes) {
        return new ReplicaCount(nodes / 2 + 1, nodes);
    }

    @Override
    public String toString() {
        return ack + "/" + from;
    }
}
