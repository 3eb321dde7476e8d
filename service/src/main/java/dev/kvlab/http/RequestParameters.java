package dev.kvlab.http;

import dev.kvlab.replication.ReplicaCount;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads and checks the API's query parameters; every problem becomes a 400 that names it. */
public final class RequestParameters {

    /** The API's limit on a key, in bytes after URL-decoding; fixed, not configurable. */
    public static final int MAX_KEY_BYTES = 1024;

    private static final Pattern REPLICAS = Pattern.compile("(\\d{1,9})/(\\d{1,9})");
    private static final Pattern TTL = Pattern.compile("-?\\d+");

    private RequestParameters() {
    }

    /** A key parameter that must be present and non-empty. */
    public static byte[] requiredKey(QueryParameters query, String name) {
        byte[] key = query.bytes(name);
        if (key == null) {
            throw new BadRequestException("missing query parameter '" + name + "'");
        }
        if (key.length == 0) {
            throw new BadRequestException("query parameter '" + name + "' must not be empty");
        }
        return checkLength(name, key);
    }

    /** A key parameter that may be absent (or empty, which means the same); {@code null} then. */
    public static byte[] optionalKey(QueryParameters query, String name) {
        byte[] key = query.bytes(name);
        return key == null || key.length == 0 ? null : checkLength(name, key);
    }

    private static byte[] checkLength(String name, byte[] key) {
        if (key.length > MAX_KEY_BYTES) {
            throw new BadRequestException("query parameter '" + name + "' is " + key.length
                    + " bytes long after decoding; keys are at most " + MAX_KEY_BYTES + " bytes");
        }
        return key;
    }

    /** The {@code replicas=<ack>/<from>} parameter, or {@code null} for the cluster's default. */
    public static ReplicaCount replicas(QueryParameters query) {
        String text = query.text("replicas");
        if (text == null) {
            return null;
        }
        Matcher matcher = REPLICAS.matcher(text);
        if (!matcher.matches()) {
            throw new BadRequestException("malformed replicas '" + text + "': expected <ack>/<from>, such as 2/3");
        }
        int ack = Integer.parseInt(matcher.group(1));
        int from = Integer.parseInt(matcher.group(2));
        if (ack < 1) {
            throw new BadRequestException("replicas=" + text + ": ack must be at least 1");
        }
        if (ack > from) {
            throw new BadRequestException("replicas=" + text + ": ack must not be greater than from");
        }
        return new ReplicaCount(ack, from);
    }

    /**
     * The {@code ttl=<seconds>} parameter of a PUT: a whole number of seconds from 1 to {@code max},
     * or {@code null} when there is none.
     */
    public static Duration ttl(QueryParameters query, Duration max) {
        String text = query.text("ttl");
        if (text == null) {
            return null;
        }
        if (!TTL.matcher(text).matches()) {
            throw new BadRequestException("malformed ttl '" + text + "': expected a whole number of seconds, such as 60");
        }
        long seconds;
        try {
            seconds = Long.parseLong(text);
        } catch (NumberFormatException tooLong) {
            seconds = Long.MAX_VALUE;
        }
        if (seconds < 1) {
            throw new BadRequestException("ttl=" + text + ": a time to live is at least 1 second");
        }
        if (seconds > max.toSeconds()) {
            throw new BadRequestException("ttl=" + text + ": a time to live is at most " + max.toSeconds() + " seconds");
        }
        return Duration.ofSeconds(seconds);
    }

    /** Refuses a {@code ttl} where it means nothing (a GET or a DELETE), rather than ignore what the client asked. */
    public static void noTtl(QueryParameters query, String method) {
        if (query.text("ttl") != null) {
            throw new BadRequestException("ttl applies to PUT only, not to " + method);
        }
    }
}
