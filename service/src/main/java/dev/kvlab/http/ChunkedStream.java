package dev.kvlab.http;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Writes a stream of buffers as a chunked response body while the client reads it; the body is
 * never built in memory. Used by the client's ranges and by the replicas' records streams.
 *
 * <p>Written with Reactor Netty directly, in groups of about {@link #GROUP_BYTES}: the next group is
 * taken from the source only while the previous one is being written to the socket. WebFlux's
 * writer asks for 128 buffers ahead whatever their size, which for 1 MiB values and a slow client is
 * 128 MiB of memory per stream (measured: a 64 MiB node ran out of direct memory); this way a stream
 * holds about two groups, however slow the client.
 */
public final class ChunkedStream {

    public static final int GROUP_BYTES = 256 * 1024;

    private ChunkedStream() {
    }

    /**
     * What a stream's buffers hold at the most: two groups (one being written, one read ahead),
     * each at most a group and one more chunk of {@code largestChunk} bytes.
     */
    public static long reservation(long largestChunk) {
        return 2 * (GROUP_BYTES + largestChunk);
    }

    /**
     * Sends {@code chunks}, each an HTTP chunk, after the status and headers already set on the
     * response. A send completes when its buffers are written to the socket; one more group waits,
     * read ahead. Buffers dropped by a cancelled stream are released.
     */
    public static Mono<Void> send(HttpServerResponse response, Flux<ByteBuf> chunks) {
        return groups(chunks)
                .concatMap(group -> response.send(Flux.fromIterable(group)).then(), 1)
                .doOnDiscard(ByteBuf.class, ReferenceCountUtil::safeRelease)
                .then();
    }

    /** Consecutive chunks in groups of about {@link #GROUP_BYTES}. */
    static Flux<List<ByteBuf>> groups(Flux<ByteBuf> chunks) {
        return Flux.defer(() -> {
            long[] bytesInGroup = {0};
            return chunks.bufferUntil(chunk -> {
                bytesInGroup[0] += chunk.readableBytes();
                if (bytesInGroup[0] < GROUP_BYTES) {
                    return false;
                }
                bytesInGroup[0] = 0;
                return true;
            });
        });
    }
}
