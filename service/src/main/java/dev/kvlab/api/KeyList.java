package dev.kvlab.api;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.PayloadTooLargeException;
import dev.kvlab.http.RequestParameters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The keys of a multi-get's body: one key per line, each line's bytes exactly (so a key cannot hold
 * {@code '\n'}, and a {@code '\r'} before it is part of the key), a final newline optional. Every
 * problem is a 400 that names the line; more than the limit of keys is a 413.
 */
final class KeyList {

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

    private static int indexOf(byte[] body, int from, int end) {
        for (int i = from; i < end; i++) {
            if (body[i] == '\n') {
                return i;
            }
        }
        return end;
    }
}
