package dev.kvlab.it.history;

/**
 * One conditional PUT as a client saw it: the condition it sent, and what came back.
 *
 * @param client    which client thread issued it
 * @param node      the coordinator it was sent to
 * @param key       the key
 * @param value     the value it wrote, never written by any other request
 * @param condition {@code If-Match}'s tag as sent (quoted), or {@link #CREATE} for {@code If-None-Match: *}
 * @param status    the answer's status, or {@link #NO_ANSWER} when none came (timeout, lost connection)
 * @param tag       on a 201 the new value's {@code ETag}; on a 412 the key's current tag as the
 *                  answer names it; null when there is none
 * @param start     when it was sent (the history's clock, nanoseconds)
 * @param end       when its answer came, or the client gave up
 */
public record ConditionalWrite(int client, int node, String key, String value, String condition, int status, String tag,
                               long start, long end) {

    /** The condition of a create, {@code If-None-Match: *}. */
    public static final String CREATE = "*";
    public static final int NO_ANSWER = -1;

    public boolean written() {
        return status == 201;
    }

    public boolean refused() {
        return status == 412;
    }

    /** As the history checker sees it: an acknowledged PUT, a PUT that may or may not have happened, or nothing (412). */
    public Operation asOperation() {
        return new Operation(client, node, Operation.Type.PUT, key, value, start, end,
                written() ? Operation.Outcome.OK : Operation.Outcome.UNKNOWN, Integer.toString(status));
    }

    @Override
    public String toString() {
        return String.format("[client %d via node %d] PUT %s=%s %s -> %s %s during %.3f..%.3f ms", client, node, key, value,
                CREATE.equals(condition) ? "If-None-Match: *" : "If-Match: " + condition,
                status == NO_ANSWER ? "no answer" : Integer.toString(status), tag == null ? "" : tag, start / 1e6, end / 1e6);
    }
}
