package dev.kvlab.replication;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Fewer than {@code ack} replicas answered, because too many failed or did not answer in time: the
 * request fails with 504, and the message says why each failed replica failed.
 */
public class NotEnoughReplicasException extends RuntimeException {

    public NotEnoughReplicasException(ReplicaCount wanted, int answered, List<Throwable> failures) {
        super(message(wanted, answered, failures));
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
