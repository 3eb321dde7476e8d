package dev.kvlab.api;

import dev.kvlab.storage.Record;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.Arrays;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;

/**
 * Reads a PUT body into the array a {@link Record} will own, copying each network buffer once as it
 * arrives. Bodies over the limit fail with 413: before reading when Content-Length says so, as soon
 * as they pass it otherwise (a chunked body).
 */
final class ValueReader {

    private final DataSize limit;

    ValueReader(DataSize limit) {
        this.limit = limit;
    }

    /** The value in an array from {@link Record#newValueArray(int)}. */
    Mono<byte[]> read(HttpServerRequest request) {
        long declared = declaredLength(request);
        if (declared > limit.toBytes()) {
            return Mono.error(new PayloadTooLargeException(limit));
        }
        return Mono.defer(() -> {
            Value value = new Value(declared);
            return request.receive().doOnNext(value::append).then(Mono.fromCallable(value::array));
        });
    }

    /** Content-Length, or -1 when the body is chunked (or the header is not a number Netty let through). */
    private static long declaredLength(HttpServerRequest request) {
        String header = request.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
        try {
            return header == null ? -1 : Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The bytes received so far, after the record's header; sized by Content-Length when there is one. */
    private final class Value {
        private byte[] array;
        private int length;

        Value(long declared) {
            array = Record.newValueArray((int) Math.max(declared, 0));
        }

        void append(ByteBuf buffer) {
            int readable = buffer.readableBytes();
            if ((long) length + readable > limit.toBytes()) {
                throw new PayloadTooLargeException(limit);
            }
            int needed = Record.HEADER_BYTES + length + readable;
            if (needed > array.length) {
                array = Arrays.copyOf(array, (int) Math.min(Math.max(needed, 2L * array.length), Record.HEADER_BYTES + limit.toBytes()));
            }
            buffer.getBytes(buffer.readerIndex(), array, Record.HEADER_BYTES + length, readable);
            length += readable;
        }

        byte[] array() {
            return Record.HEADER_BYTES + length == array.length ? array : Arrays.copyOf(array, Record.HEADER_BYTES + length);
        }
    }
}
