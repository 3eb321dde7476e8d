package dev.kvlab.api;

import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.replication.NotEnoughReplicasException;
import dev.kvlab.replication.UnsatisfiableReplicasException;
import dev.kvlab.replication.VersionTooFarAheadException;
import dev.kvlab.storage.StorageFullException;
import java.util.concurrent.RejectedExecutionException;

/**
 * The status of one key of a request that carries many, when its read or write failed: the status a
 * request for that key alone would have got (as {@code HttpErrors} answers it), so a client tells a
 * key it may retry (503, 504) from one it must fix.
 */
final class KeyFailures {

    private KeyFailures() {
    }

    static int statusOf(Throwable failure) {
        return switch (failure) {
            case NotEnoughReplicasException e -> switch (e.shortfall()) {
                case DISK_FULL -> 507;
                case OVERLOADED -> 503;
                case UNANSWERED -> 504;
            };
            case UnsatisfiableReplicasException e -> 400;
            case VersionTooFarAheadException e -> 400;
            case OverBudgetException e -> 503;
            case RejectedExecutionException e -> 503;
            case StorageFullException e -> 507;
            default -> 500;
        };
    }

    /** The failure's message as the contents of a JSON string, without its quotes. */
    static String jsonText(Throwable failure) {
        String message = failure.getMessage() != null ? failure.getMessage() : failure.toString();
        StringBuilder escaped = new StringBuilder(message.length() + 8);
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            switch (c) {
                case '"' -> escaped.append("\\\"");
                case '\\' -> escaped.append("\\\\");
                case '\n' -> escaped.append("\\n");
                case '\r' -> escaped.append("\\r");
                case '\t' -> escaped.append("\\t");
                default -> {
                    if (c < 0x20) {
                        escaped.append(String.format("\\u%04x", (int) c));
                    } else {
                        escaped.append(c);
                    }
                }
            }
        }
        return escaped.toString();
    }
}
