package dev.kvlab.api;

import dev.kvlab.storage.Entry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.http.MediaType;

/** How {@code /v0/entities} writes an entry; each entry is one DataBuffer, so one HTTP chunk. */
enum RangeFormat {

    /** The course's format: one chunk per entry holding {@code <key>\n<value>}. */
    CHUNKS(MediaType.APPLICATION_OCTET_STREAM) {
        @Override
        DataBuffer encode(Entry entry, DataBufferFactory buffers) {
            ByteBuffer value = entry.record().value();
            DataBuffer buffer = buffers.allocateBuffer(entry.key().length + 1 + value.remaining());
            return buffer.write(entry.key()).write((byte) '\n').write(value);
        }
    },

    /**
     * Extension for clients that cannot see chunk boundaries: one JSON object per line,
     * {@code {"key":"<base64>","value":"<base64>"}}, both in standard base64 with padding.
     */
    NDJSON(MediaType.APPLICATION_NDJSON) {
        @Override
        DataBuffer encode(Entry entry, DataBufferFactory buffers) {
            Base64.Encoder base64 = Base64.getEncoder();
            byte[] key = base64.encode(entry.key());
            ByteBuffer value = base64.encode(entry.record().value());
            DataBuffer buffer = buffers.allocateBuffer(key.length + value.remaining() + 24);
            return buffer.write(KEY_PREFIX).write(key).write(VALUE_PREFIX).write(value).write(LINE_END);
        }
    };

    private static final byte[] KEY_PREFIX = "{\"key\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] VALUE_PREFIX = "\",\"value\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LINE_END = "\"}\n".getBytes(StandardCharsets.US_ASCII);

    private final MediaType mediaType;

    RangeFormat(MediaType mediaType) {
        this.mediaType = mediaType;
    }

    MediaType mediaType() {
        return mediaType;
    }

    abstract DataBuffer encode(Entry entry, DataBufferFactory buffers);

    /** NDJSON when the client accepts it explicitly, the course's chunks otherwise. */
    static RangeFormat negotiate(List<MediaType> accepted) {
        for (MediaType type : accepted) {
            if (!type.isWildcardType() && !type.isWildcardSubtype() && type.isCompatibleWith(MediaType.APPLICATION_NDJSON)) {
                return NDJSON;
            }
        }
        return CHUNKS;
    }
}
