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
 * Reads a PUT body into the array a {@link Record} will own, copying each network buffer into it as it
 * arrives. A body over the limit fails with 413. Up to twice the limit it is still read to its end
 * and dropped: the client may still be sending it, and closing a connection with unread bytes
 * resets it, so the client could lose the 413 before reading it. A larger one (Content-Length says
 * so, or a chunked body that gets there) is cut off at once.
 *
 * <p>The array counts against the node's {@link MemoryBudget} until the request is done with it,
 * and is taken as the body arrives, never ahead of it: it grows to twice what has come, up to the
 * declared length, so a client that declares a large body and stalls holds no more than it sent (and
 * {@link BodyDeadline} ends its request). A body whose bytes arrive with its headers, as small ones
 * do, is copied once into an array of its exact size. A body the budget has no room for is read to
 * its end and dropped too, and fails with 503.
 */
public final class ValueReader {

    private final long limit;
    private final DataSize limitSize;
    private final MemoryBudget budget;
    /** What the body is and the setting that limits it, for the 413's message. */
    private final String what;
    private final String setting;

    public ValueReader(DataSize limit, MemoryBudget budget) {
        this(limit, budget, "the value", "kvlab.api.max-value-size");
    }

    /** A reader of bodies other than a PUT's value, such as a list of keys, whose 413 names {@code what} and {@code setting}. */
    public ValueReader(DataSize limit, MemoryBudget budget, String what, String setting) {
        this.limit = limit.toBytes();
        this.limitSize = limit;
        this.budget = budget;
        this.what = what;
        this.setting = setting;
    }

    /**
     * Reads the value, in an array from {@link Record#newValueArray(int)}, and hands it to {@code use}
     * with the lease that holds its bytes: they stay in the budget until the Mono that {@code use}
     * returns ends, and longer for each user that shares the lease.
     */
    public <T> Mono<T> read(HttpServerRequest request, BiFunction<byte[], MemoryBudget.Lease, Mono<T>> use) {
        return read(request, Record.HEADER_BYTES, use);
    }

    /** Reads the value as {@link #read(HttpServerRequest, BiFunction)} does, behind {@code header} free bytes ({@link Record#headerBytes}). */
    public <T> Mono<T> read(HttpServerRequest request, int header, BiFunction<byte[], MemoryBudget.Lease, Mono<T>> use) {
        long declared = declaredLength(request);
        if (declared > 2 * limit) {
            return Mono.error(new PayloadTooLargeException(what, limitSize, setting));
        }
        return Mono.using(budget::lease, lease -> {
            Value value = new Value(declared, header, lease);
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
     * The bytes received so far, after the record's header. The array is null until the first
     * bytes arrive, and once the body is being dropped: over the limit, or over the budget.
     */
    private final class Value {
        private final MemoryBudget.Lease lease;
        /** The room left in front of the value for the record's header. */
        private final int header;
        /** The most the array grows to: the declared length, or the limit when there is none. */
        private final long largest;
        private byte[] array;
        private boolean dropped;
        private long received;

        Value(long declared, int header, MemoryBudget.Lease lease) {
            this.lease = lease;
            this.header = header;
            this.largest = header + (declared >= 0 && declared <= limit ? declared : limit);
        }

        void append(ByteBuf buffer) {
            int readable = buffer.readableBytes();
            received += readable;
            if (received > limit) {
                // Over the limit: drop it all, and stop reading at twice the limit.
                drop();
                if (received > 2 * limit) {
                    throw new PayloadTooLargeException(what, limitSize, setting);
                }
                return;
            }
            if (dropped) {
                return;
            }
            int needed = header + (int) received;
            int length = array == null ? 0 : array.length;
            if (needed > length) {
                int grown = (int) Math.min(Math.max(needed, 2L * length), largest);
                if (!lease.tryHold(grown - length)) {
                    drop();
                    return;
                }
                array = array == null ? new byte[grown] : Arrays.copyOf(array, grown);
            }
            buffer.getBytes(buffer.readerIndex(), array, needed - readable, readable);
        }

        private void drop() {
            dropped = true;
            array = null;
        }

        byte[] array() {
            if (received > limit) {
                throw new PayloadTooLargeException(what, limitSize, setting);
            }
            if (dropped) {
                throw new OverBudgetException(budget.limit());
            }
            if (array == null) {
                // An empty value: its record is the header alone.
                lease.hold(header);
                return new byte[header];
            }
            int length = header + (int) received;
            return length == array.length ? array : Arrays.copyOf(array, length);
        }
    }
}
