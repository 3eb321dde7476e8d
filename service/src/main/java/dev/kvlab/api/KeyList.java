package dev.kvlab.api;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.PayloadTooLargeException;
import dev.kvlab.http.QueryParameters;
import dev.kvlab.http.RequestParameters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The keys of a multi-get, from its body or its query. In a body: one key per line, each line's
 * bytes exactly (so a key cannot hold {@code '\n'}, and a {@code '\r'} before it is part of the
 * key), a final newline optional. In a query: each {@code id} parameter, percent-decoded as the
 * single-key requests' {@code id}. Every problem is a 400 that names the line or the {@code id};
 * more than the limit of keys is a 413, either way.
 */
final class KeyList {

    /** The query parameter that names a key, as on the single-key requests. */
    static final String QUERY_KEY = "id";

    private KeyList() {
    }

    /** The keys in {@code body[from..]}, in order, duplicates kept. */
    static List<byte[]> parse(byte[] body, int from, int maxKeys) {
        int end = body.length;
        if (end > from && body[end - 1] == '\n') {
            end--;
        }
        if (end <= from) {
            throw new BadRequestException("the body lists no keys: send one key per line");
        }
        List<byte[]> keys = new ArrayList<>();
        int line = 1;
        for (int start = from; start <= end; line++) {
            int newline = indexOf(body, start, end);
            int keyLength = newline - start;
            if (keyLength == 0) {
                throw new BadRequestException("line " + line + " of the body is empty: keys are 1 to " + RequestParameters.MAX_KEY_BYTES + " bytes");
            }
            if (keyLength > RequestParameters.MAX_KEY_BYTES) {
                throw new BadRequestException("line " + line + " of the body is a key of " + keyLength + " bytes; keys are at most "
                        + RequestParameters.MAX_KEY_BYTES + " bytes");
            }
            if (keys.size() == maxKeys) {
                throw new PayloadTooLargeException("the body lists more than " + maxKeys + " keys (kvlab.api.multi-key.max-keys)");
            }
            keys.add(Arrays.copyOfRange(body, start, newline));
            start = newline + 1;
        }
        return keys;
    }

    /** The {@code id} parameters of {@code query}, in order, duplicates kept. */
    static List<byte[]> ofQuery(QueryParameters query, int maxKeys) {
        List<byte[]> keys = query.all(QUERY_KEY);
        if (keys.isEmpty()) {
            throw new BadRequestException("missing query parameter '" + QUERY_KEY + "': list the keys as ?id=<key>&id=<key>..., "
                    + "or POST them one per line");
        }
        for (int i = 0; i < keys.size(); i++) {
            int keyLength = keys.get(i).length;
            if (keyLength == 0) {
                throw new BadRequestException("id number " + (i + 1) + " of the query is empty: keys are 1 to " + RequestParameters.MAX_KEY_BYTES + " bytes");
            }
            if (keyLength > RequestParameters.MAX_KEY_BYTES) {
                throw new BadRequestException("id number " + (i + 1) + " of the query is a key of " + keyLength
                        + " bytes after decoding; keys are at most " + RequestParameters.MAX_KEY_BYTES + " bytes");
            }
            if (i == maxKeys) {
                throw new PayloadTooLargeException("the query lists more than " + maxKeys + " keys (kvlab.api.multi-key.max-keys)");
            }
        }
        return keys;
    }

    /** Refuses {@code id} parameters on a request whose keys are in its body, rather than ignore them. */
    static void noneInQuery(QueryParameters query) {
        if (query.bytes(QUERY_KEY) != null) {
            throw new BadRequestException("a POST lists its keys in the body, one per line, not as '" + QUERY_KEY
                    + "' in the query; or send them as GET ?id=<key>&id=<key>...");
        }
    }

    private static int indexOf(byte[] body, int from, int end) {
        for (int i = from; i < end; i++) {
            if (body[i] == '\n') {
                return i;
            }
        }
        return end;
    }
}
