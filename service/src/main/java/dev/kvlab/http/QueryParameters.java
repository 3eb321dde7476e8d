package dev.kvlab.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The query string of a request, percent-decoded into raw bytes. Keys are bytes, not strings:
 * decoding {@code %FF} to the byte 0xFF (instead of a replacement character) keeps every key,
 * binary ones included, exactly as the client sent it. {@code +} is a space, as in HTML forms.
 * The first occurrence of a repeated parameter wins, except where a request reads every occurrence
 * ({@link #all}: the keys of a multi-get).
 */
public final class QueryParameters {

    private final Map<String, byte[]> values;
    /** Kept for {@link #all}, which decodes it again: single-key requests pay nothing for repeats. */
    private final String rawQuery;

    private QueryParameters(Map<String, byte[]> values, String rawQuery) {
        this.values = values;
        this.rawQuery = rawQuery;
    }

    /** The parameters of a request target such as {@code /v0/entity?id=k} (Reactor Netty's {@code uri()}). */
    public static QueryParameters ofTarget(String target) {
        int question = target.indexOf('?');
        return parse(question < 0 ? null : target.substring(question + 1));
    }

    public static QueryParameters parse(String rawQuery) {
        Map<String, byte[]> values = new HashMap<>();
        forEach(rawQuery, values::putIfAbsent);
        return new QueryParameters(values, rawQuery);
    }

    /** Every occurrence of the parameter, decoded, in the order sent; empty when absent. */
    public List<byte[]> all(String name) {
        List<byte[]> all = new ArrayList<>();
        forEach(rawQuery, (parameter, value) -> {
            if (parameter.equals(name)) {
                all.add(value);
            }
        });
        return all;
    }

    /** Each parameter of the query in the order sent, decoded; a bad escape is a {@link BadRequestException}. */
    private static void forEach(String rawQuery, BiConsumer<String, byte[]> consumer) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return;
        }
        int start = 0;
        while (start <= rawQuery.length()) {
            int end = rawQuery.indexOf('&', start);
            if (end < 0) {
                end = rawQuery.length();
            }
            if (end > start) {
                int equals = rawQuery.indexOf('=', start);
                boolean hasValue = equals >= 0 && equals < end;
                String name = new String(decode(rawQuery, start, hasValue ? equals : end), StandardCharsets.UTF_8);
                byte[] value = hasValue ? decode(rawQuery, equals + 1, end) : new byte[0];
                consumer.accept(name, value);
            }
            start = end + 1;
        }
    }

    /** The parameter's decoded bytes, or {@code null} when absent. */
    public byte[] bytes(String name) {
        return values.get(name);
    }

    /** The parameter as UTF-8 text, or {@code null} when absent. */
    public String text(String name) {
        byte[] value = values.get(name);
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }

    private static byte[] decode(String raw, int from, int to) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(to - from);
        for (int i = from; i < to; i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= to) {
                    throw new BadRequestException("malformed percent-encoding at the end of '" + raw.substring(from, to) + "'");
                }
                int high = Character.digit(raw.charAt(i + 1), 16);
                int low = Character.digit(raw.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    throw new BadRequestException("malformed percent-encoding '" + raw.substring(i, i + 3) + "' in the query");
                }
                out.write(high << 4 | low);
                i += 2;
            } else if (c == '+') {
                out.write(' ');
            } else if (c < 0x80) {
                out.write(c);
            } else {
                // A raw non-ASCII character (clients should encode it, some do not): its UTF-8 bytes.
                int codePointEnd = Character.isHighSurrogate(c) && i + 1 < to ? i + 2 : i + 1;
                out.writeBytes(raw.substring(i, codePointEnd).getBytes(StandardCharsets.UTF_8));
                i = codePointEnd - 1;
            }
        }
        return out.toByteArray();
    }
}
