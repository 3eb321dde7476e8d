package dev.kvlab.replication;

import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.storage.StorageFullException;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.stream.Collectors;

/**
 * Fewer than {@code ack} replicas answered, because too many failed or did not answer in time; the
 * message says why each failed replica failed, and {@link #shortfall()} what it comes to for the
 * client.
 */
public class NotEnoughReplicasException extends RuntimeException {

    /** What kept the quorum from answering, most telling first: the client's status follows from it. */
    public enum Shortfall {
        /** A replica's disk is full (507). */
        DISK_FULL,
        /** A replica, or this coordinator, shed the call: full queues or memory budget (503). */
        OVERLOADED,
        /** The replicas failed or did not answer in time (504). */
        UNANSWERED
    }

    private final Shortfall shortfall;

    public NotEnoughReplicasException(ReplicaCount wanted, int answered, List<Throwable> failures) {
        super(message(wanted, answered, failures));
        this.shortfall = shortfallOf(failures);
    }

    public Shortfall shortfall() {
        return shortfall;
    }

    private static Shortfall shortfallOf(List<Throwable> failures) {
        Shortfall worst = Shortfall.UNANSWERED;
        for (Throwable failure : failures) {
            Shortfall each = switch (failure) {
                case StorageFullException e -> Shortfall.DISK_FULL;
                case ReplicaRefusedException e when e.reason() == ReplicaRefusedException.Reason.DISK_FULL -> Shortfall.DISK_FULL;
                case ReplicaRefusedException e when e.reason() == ReplicaRefusedException.Reason.OVERLOADED -> Shortfall.OVERLOADED;
                case OverBudgetException e -> Shortfall.OVERLOADED;
                case RejectedExecutionException e -> Shortfall.OVERLOADED;
                default -> Shortfall.UNANSWERED;
            };
            if (each.ordinal() < worst.ordinal()) {
                worst = each;
            }
        }
        return worst;
    }

    private static String message(ReplicaCount wanted, int answered, List<Throwable> failures) {
        StringBuilder message = new StringBuilder("only ").append(answered).append(" of ").append(wanted.from())
                .append(" replicas answered, ").append(wanted.ack()).append(" needed");
        if (!failures.isEmpty()) {
            message.append("; ").append(failures.size()).append(" failed: ")
                    .append(failures.stream().map(NotEnoughReplicasException::reason).collect(Collectors.joining("; ")));
        }
        return message.toString();
    }

    private static String reason(Throwable failure) {
        String text = failure.getMessage();
        return text == null || text.isBlank() ? failure.getClass().getSimpleName() : text;
    }
}
