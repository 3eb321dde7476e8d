package dev.kvlab.storage;

/**
 * Orders the writes to one key across nodes. {@code timestamp} comes from a hybrid logical clock
 * (wall-clock milliseconds in the high bits, a counter in the low 16 bits); {@code node} is the
 * writer's id and only breaks ties between two nodes that produced the same timestamp.
 */
public record Version(long timestamp, int node) implements Comparable<Version> {

    public Version {
        if (timestamp < 0) {
            throw new IllegalArgumentException("version timestamp must not be negative: " + timestamp);
        }
    }

    @Override
    public int compareTo(Version other) {
        int byTime = Long.compare(timestamp, other.timestamp);
        return byTime != 0 ? byTime : Integer.compare(node, other.node);
    }

    public boolean isNewerThan(Version other) {
        return compareTo(other) > 0;
    }

    /** The wire form used between nodes: {@code <timestamp>.<node>}, both decimal. */
    @Override
    public String toString() {
        return timestamp + "." + node;
    }

    /** Parses {@link #toString()}; throws {@link IllegalArgumentException} on anything else. */
    public static Version parse(String text) {
        int dot = text.indexOf('.');
        if (dot <= 0 || dot == text.length() - 1) {
            throw new IllegalArgumentException("malformed version '" + text + "', expected <timestamp>.<node>");
        }
        try {
            return new Version(Long.parseLong(text, 0, dot, 10), Integer.parseInt(text, dot + 1, text.length(), 10));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("malformed version '" + text + "', expected <timestamp>.<node>", e);
        }
    }
}
