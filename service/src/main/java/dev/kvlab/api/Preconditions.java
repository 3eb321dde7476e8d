package dev.kvlab.api;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.PreconditionFailedException;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code If-Match} and {@code If-None-Match} of a request on {@code /v0/entity}, evaluated as
 * RFC 9110 §13.2.2 orders them against the key's current entity tag ({@link EntityTag}; none when
 * the key is absent or deleted). If-Match compares strongly (a weak tag never matches),
 * If-None-Match weakly. A malformed header is a 400, never a condition taken as true.
 *
 * <p>The date conditions are not evaluated: a write that carries one is refused with 400 rather
 * than performed unconditionally; a read ignores them, as RFC 9110 lets a server that does not
 * evaluate them, and answers in full.
 */
final class Preconditions {

    static final Preconditions NONE = new Preconditions(null, null);

    /** What a write cannot be conditional on: refused, not ignored, so no write is unconditional by mistake. */
    private static final List<String> UNSUPPORTED_ON_WRITES = List.of("If-Unmodified-Since", "If-Modified-Since", "If-Range");

    /** If-Match; null when the request has none. */
    private final TagList ifMatch;
    /** If-None-Match; null when the request has none. */
    private final TagList ifNoneMatch;

    private Preconditions(TagList ifMatch, TagList ifNoneMatch) {
        this.ifMatch = ifMatch;
        this.ifNoneMatch = ifNoneMatch;
    }

    /** The conditions of a GET or HEAD. */
    static Preconditions ofRead(HttpHeaders headers) {
        TagList ifMatch = TagList.of(headers, "If-Match");
        TagList ifNoneMatch = TagList.of(headers, "If-None-Match");
        return ifMatch == null && ifNoneMatch == null ? NONE : new Preconditions(ifMatch, ifNoneMatch);
    }

    /** The conditions of a PUT or DELETE; a date condition or If-Range is a 400. */
    static Preconditions ofWrite(HttpHeaders headers) {
        for (String unsupported : UNSUPPORTED_ON_WRITES) {
            if (headers.contains(unsupported)) {
                throw new BadRequestException(unsupported + " is not supported on writes: kvlab makes a write conditional"
                        + " on the key's ETag only (If-Match, If-None-Match)");
            }
        }
        return ofRead(headers);
    }

    boolean isEmpty() {
        return ifMatch == null && ifNoneMatch == null;
    }

    /**
     * For a read that found a value with the tag {@code current}: true when the answer is 304 Not
     * Modified (If-None-Match lists the tag, or is {@code *}).
     *
     * @throws PreconditionFailedException when If-Match does not match
     */
    boolean notModified(String current) {
        checkIfMatch(current);
        return ifNoneMatch != null && ifNoneMatch.matchesWeakly(current);
    }

    /**
     * For a write, against the key's current tag ({@code null} when the key is absent or deleted).
     *
     * @throws PreconditionFailedException when a condition does not hold
     */
    void checkWrite(String current) {
        checkIfMatch(current);
        if (ifNoneMatch != null && ifNoneMatch.matchesWeakly(current)) {
            throw new PreconditionFailedException(ifNoneMatch.any()
                    ? "If-None-Match: * but the key has a value (ETag \"" + current + "\")"
                    : "If-None-Match lists the key's current ETag \"" + current + "\"");
        }
    }

    private void checkIfMatch(String current) {
        if (ifMatch == null || ifMatch.matchesStrongly(current)) {
            return;
        }
        if (current == null) {
            throw new PreconditionFailedException("If-Match: the key has no value");
        }
        throw new PreconditionFailedException("If-Match does not list the key's current ETag \"" + current + "\""
                + (ifMatch.allWeak() ? " (a weak tag never matches If-Match)" : ""));
    }

    /** An entity tag of a request: its opaque part (between the quotes) and whether it was weak ({@code W/}). */
    private record Tag(boolean weak, String opaque) {
    }

    /** {@code *} ({@code any}), or a list of at least one tag. */
    private record TagList(boolean any, List<Tag> tags) {

        /** The header's values (every line of it, named as the RFC spells it, for messages) as one list; null when absent. */
        static TagList of(HttpHeaders headers, String name) {
            List<String> lines = headers.getAll(name);
            if (lines.isEmpty()) {
                return null;
            }
            String value = String.join(",", lines).trim();
            if (value.equals("*")) {
                return new TagList(true, List.of());
            }
            List<Tag> tags = parse(name, value);
            if (tags.isEmpty()) {
                throw new BadRequestException(name + " lists no entity tag: expected * or \"<tag>\"[, ...]");
            }
            return new TagList(false, tags);
        }

        /**
         * {@code #entity-tag} of RFC 9110: {@code [W/]"<etagc>*"} separated by commas and optional
         * spaces; empty elements are allowed. Anything else is a 400 that says where.
         */
        private static List<Tag> parse(String name, String value) {
            List<Tag> tags = new ArrayList<>();
            int at = 0;
            int length = value.length();
            while (true) {
                while (at < length && (value.charAt(at) == ',' || value.charAt(at) == ' ' || value.charAt(at) == '\t')) {
                    at++;
                }
                if (at == length) {
                    return tags;
                }
                boolean weak = value.startsWith("W/", at);
                if (weak) {
                    at += 2;
                }
                if (at == length || value.charAt(at) != '"') {
                    throw malformed(name, value, at);
                }
                int end = at + 1;
                while (end < length && isEtagChar(value.charAt(end))) {
                    end++;
                }
                if (end == length || value.charAt(end) != '"') {
                    throw malformed(name, value, end);
                }
                tags.add(new Tag(weak, value.substring(at + 1, end)));
                at = end + 1;
                while (at < length && (value.charAt(at) == ' ' || value.charAt(at) == '\t')) {
                    at++;
                }
                if (at < length && value.charAt(at) != ',') {
                    throw malformed(name, value, at);
                }
            }
        }

        /** etagc: any visible character but the double quote, or obs-text. */
        private static boolean isEtagChar(char c) {
            return c == 0x21 || (c >= 0x23 && c <= 0x7e) || (c >= 0x80 && c <= 0xff);
        }

        private static BadRequestException malformed(String name, String value, int at) {
            return new BadRequestException(name + " is malformed at character " + (at + 1) + " of '" + value
                    + "': expected * or a list of entity tags, \"<tag>\" or W/\"<tag>\"");
        }

        /** {@code *} matches any current value; a list, a tag whose opaque part is the current one, weak or not. */
        boolean matchesWeakly(String current) {
            return current != null && (any || tags.stream().anyMatch(tag -> tag.opaque().equals(current)));
        }

        /** Like {@link #matchesWeakly}, but a weak tag never matches. */
        boolean matchesStrongly(String current) {
            return current != null && (any || tags.stream().anyMatch(tag -> !tag.weak() && tag.opaque().equals(current)));
        }

        boolean allWeak() {
            return tags.stream().allMatch(Tag::weak);
        }
    }
}
