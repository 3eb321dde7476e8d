package dev.kvlab.api;

import dev.kvlab.storage.Entry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.springframework.core.io.buffer.NettyDataBufferFactory;

/**
 * How a multi-get writes each key's answer, in the formats of the ranges ({@link RangeFormat}):
 *
 * <ul>
 * <li>{@link RangeFormat#CHUNKS}, the course's: a found key is a chunk {@code <key>\n<value>}, an
 *     absent one is left out as ranges leave out deleted keys, and a key that cannot be read fails
 *     the answer ({@link #encode} throws its failure). There is no room in that format for a
 *     status, and a trailer would be dropped by most clients, which would then take a failed key
 *     for an absent one.</li>
 * <li>{@link RangeFormat#NDJSON}: a line per key with its status, {@code {"key":"<base64>","status":200,"value":"<base64>"}},
 *     {@code {"key":"<base64>","status":404}}, or {@code {"key":"<base64>","status":504,"error":"<why>"}}.</li>
 * </ul>
 */
final class MultiGetFormat {

    private static final byte[] KEY_PREFIX = "{\"key\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FOUND = "\",\"status\":200,\"value\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FOUND_END = "\"}\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MISSING = "\",\"status\":404}\n".getBytes(StandardCharsets.US_ASCII);

    private final RangeFormat format;
    private final NettyDataBufferFactory buffers;

    MultiGetFormat(RangeFormat format, ByteBufAllocator allocator) {
        this.format = format;
        this.buffers = new NettyDataBufferFactory(allocator);
    }

    /** The key's chunk; null when the format leaves it out. The answer's bytes are copied: the caller releases it. */
    ByteBuf encode(KeyAnswer answer) {
        return switch (format) {
            case CHUNKS -> chunk(answer);
            case NDJSON -> line(answer);
        };
    }

    private ByteBuf chunk(KeyAnswer answer) {
        if (answer.failure() != null) {
            throw failureOf(answer);
        }
        if (answer.record() == null) {
            return null;
        }
        return NettyDataBufferFactory.toByteBuf(format.encode(new Entry(answer.key(), answer.record()), buffers));
    }

    private ByteBuf line(KeyAnswer answer) {
        byte[] key = Base64.getEncoder().encode(answer.key());
        if (answer.failure() != null) {
            byte[] rest = ("\",\"status\":" + KeyFailures.statusOf(answer.failure()) + ",\"error\":\"" + KeyFailures.jsonText(answer.failure()) + "\"}\n")
                    .getBytes(StandardCharsets.UTF_8);
            return buffers.getByteBufAllocator().buffer(KEY_PREFIX.length + key.length + rest.length).writeBytes(KEY_PREFIX).writeBytes(key).writeBytes(rest);
        }
        if (answer.record() == null) {
            return buffers.getByteBufAllocator().buffer(KEY_PREFIX.length + key.length + MISSING.length).writeBytes(KEY_PREFIX).writeBytes(key).writeBytes(MISSING);
        }
        ByteBuffer value = Base64.getEncoder().encode(answer.record().value());
        return buffers.getByteBufAllocator().buffer(KEY_PREFIX.length + key.length + FOUND.length + value.remaining() + FOUND_END.length)
                .writeBytes(KEY_PREFIX).writeBytes(key).writeBytes(FOUND).writeBytes(value).writeBytes(FOUND_END);
    }

    private static RuntimeException failureOf(KeyAnswer answer) {
        return answer.failure() instanceof RuntimeException runtime ? runtime : new IllegalStateException(answer.failure());
    }
}
