package dev.kvlab.it.history;

/**
 * One client operation as a client saw it: when it started and ended (client clock, nanoseconds),
 * what it asked and what came back.
 *
 * @param client  which client thread issued it
 * @param node    the coordinator it was sent to
 * @param type    PUT, DELETE or GET
 * @param key     the key
 * @param value   the value a PUT wrote, or the value a GET returned (null for a 404 or a DELETE)
 * @param outcome how it ended
 * @param detail  the status or the error, for the report
 */
public record Operation(int client, int node, Type type, String key, String value, long start, long end,
                        Outcome outcome, String detail) {

    public enum Type { PUT, DELETE, GET }

    public enum Outcome {
        /** Acknowledged: 201, 202, or a read that answered 200 or 404. */
        OK,
        /** No acknowledgement (504, connection error, client timeout): a write may or may not have taken effect. */
        UNKNOWN
    }

    public boolean isWrite() {
        return type != Type.GET;
    }

    public boolean acknowledged() {
        return outcome == Outcome.OK;
    }

    @Override
    public String toString() {
        String what = switch (type) {
            case PUT -> "PUT " + key + "=" + value;
            case DELETE -> "DELETE " + key;
            case GET -> "GET " + key + " -> " + (outcome == Outcome.OK ? (value == null ? "404" : value) : "?");
        };
        return String.format("[client %d via node %d] %s (%s) during %.3f..%.3f ms", client, node, what, detail,
                start / 1e6, end / 1e6);
    }
}
