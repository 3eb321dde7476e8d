package dev.kvlab.api;

import dev.kvlab.replication.ValueArrays;
import dev.kvlab.storage.Record;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.server.ServerRequest;
import reactor.core.publisher.Mono;

/**
 * Reads a PUT body into the array a {@link Record} will own: one copy from Netty's buffers, none
 * after. Bodies over the limit fail with 413, before reading when Content-Length says so.
 */
final class ValueReader {

    private final DataSize limit;

    ValueReader(DataSize limit) {
        this.limit = limit;
    }

    /** The value in an array from {@link Record#newValueArray(int)}. */
    Mono<byte[]> read(ServerRequest request) {
        long declared = request.headers().contentLength().orElse(-1);
        if (declared > limit.toBytes()) {
            return Mono.error(new PayloadTooLargeException(limit));
        }
        return DataBufferUtils.join(request.bodyToFlux(DataBuffer.class), (int) limit.toBytes())
                .map(ValueArrays::copyOf)
                .defaultIfEmpty(Record.newValueArray(0))
                .onErrorMap(DataBufferLimitException.class, e -> new PayloadTooLargeException(limit));
    }
}
