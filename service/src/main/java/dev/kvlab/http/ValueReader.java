package dev.kvlab.http;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.storage.Record;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.Arrays;
import java.util.function.BiFunction;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;

/**
 * Reads a PUT body into the array a {@link Record} will own, copying each network buffer once as it
 * arrives. A body over the limit fails with 413. Up to twice the limit it is still read to its end
 * and dropped: the client may still be sending it, and closing a connection with unread bytes
 * resets it, so the client could lose the 413 before reading it. A larger one (Content-Length says
 * so, or a chunked body that gets there) is cut off at once.
 *
 * <p>The array counts against the node's {@link MemoryBudget} until the request is done with it. A
 * body the budget has no room for is read to its end and dropped too, and fails with 503.
 */
public final class ValueReader {

    private final long limit;
    private final DataSize limitSize;
    private final MemoryBudget budget;

    public ValueReader(DataSize limit, MemoryBudget budget) {
        this.limit = limit.toBytes();
        this.limitSize = limit;
        this.budget = budget;
    }

    /**
     * Reads the value, in an array from {@link Record#newValueArray(int)}, and hands it to {@code use}
     * with the lease that holds its bytes: they stay in the budget until the Mono that {@code use}
     * returns ends, and longer for each user that shares the lease.
     */
    public <T> Mono<T> read(HttpServerRequest request, BiFunction<byte[], MemoryBudget.Lease, Mono<T>> use) {
        long declared = declaredLength(request);
        if (declared > 2 * limit) {
            return Mono.error(new PayloadTooLargeException(limitSize));
        }
        return Mono.using(budget::lease, lease -> {
            // A declared body over the limit will be dropped: nothing to allocate for it.
            Value value = new Value(declared > limit ? 0 : declared, lease);
            return request.receive().doOnNext(value::append).then(Mono.fromCallable(value::array)).flatMap(array -> use.apply(array, lease));
        }, MemoryBudget.Lease::release);
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

    /**
     * The bytes received so far, after the record's header; sized by Content-Length when there is
     * one. The array is null once the body is being dropped: over the limit, or over the budget.
     */
    private final class Value {
        private final MemoryBudget.Lease lease;
        private byte[] array;
        private long received;

        Value(long expected, MemoryBudget.Lease lease) {
            this.lease = lease;
            int valueLength = (int) Math.max(expected, 0);
            array = lease.tryHold(Record.HEADER_BYTES + valueLength) ? Record.newValueArray(valueLength) : null;
        }

        void append(ByteBuf buffer) {
            int readable = buffer.readableBytes();
            received += readable;
            if (received > limit) {
                // Over the limit: drop it all, and stop reading at twice the limit.
                array = null;
                if (received > 2 * limit) {
                    throw new PayloadTooLargeException(limitSize);
                }
                return;
            }
            int needed = Record.HEADER_BYTES + (int) received;
            if (array != null && needed > array.length) {
                int grown = (int) Math.min(Math.max(needed, 2L * array.length), Record.HEADER_BYTES + limit);
                array = lease.tryHold(grown - array.length) ? Arrays.copyOf(array, grown) : null;
            }
            if (array != null) {
                buffer.getBytes(buffer.readerIndex(), array, needed - readable, readable);
            }
        }

        byte[] array() {
            if (received > limit) {
                throw new PayloadTooLargeException(limitSize);
            }
            if (array == null) {
                throw new OverBudgetException(budget.limit());
            }
            int length = Record.HEADER_BYTES + (int) received;
            return length == array.length ? array : Arrays.copyOf(array, length);
        }
    }
}
