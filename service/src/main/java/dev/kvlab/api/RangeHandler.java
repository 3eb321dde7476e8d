package dev.kvlab.api;

import dev.kvlab.storage.Entry;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.function.Function;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A range of entries streamed as chunks while the client reads them; the body is never built in
 * memory. Serves the client's {@code /v0/entities} (the cluster's live keys) and the replicas'
 * {@code /internal/v1/records} (one node's records, tombstones included).
 *
 * <p>Written with Reactor Netty directly, in groups of about {@link #GROUP_BYTES}: the next group is
 * read from the store only while the previous one is being written to the socket. WebFlux's writer
 * asks for 128 buffers ahead whatever their size, which for 1 MiB values and a slow client is
 * 128 MiB of memory per stream (measured: a 64 MiB node ran out of direct memory); this way a range
 * holds about two groups, however slow the client.
 */
final class RangeHandler {

    static final int GROUP_BYTES = 256 * 1024;

    /** Where the entries of {@code [start, end)} come from; {@code end} may be null. */
    interface Source {
        Flux<Entry> range(byte[] start, byte[] end);
    }

    private final Source source;
    private final Function<List<MediaType>, RangeFormat> formats;
    private final RequestMetrics metrics;

    /** {@code metrics} may be null: ranges between replicas are not client requests. */
    RangeHandler(Source source, Function<List<MediaType>, RangeFormat> formats, RequestMetrics metrics) {
        this.source = source;
        this.formats = formats;
        this.metrics = metrics;
    }

    Mono<Void> range(HttpServerRequest request, HttpServerResponse response) {
        long started = System.nanoTime();
        return stream(request, response)
                .doOnSuccess(done -> record(response.status().code(), started))
                .doOnError(error -> record(500, started));
    }

    private void record(int status, long started) {
        if (metrics != null) {
            metrics.record("range", status, started);
        }
    }

    private Mono<Void> stream(HttpServerRequest request, HttpServerResponse response) {
        byte[] start;
        byte[] end;
        try {
            QueryParameters query = QueryParameters.ofTarget(request.uri());
            start = RequestParameters.requiredKey(query, "start");
            end = RequestParameters.optionalKey(query, "end");
        } catch (BadRequestException e) {
            return NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage());
        }
        RangeFormat format = formats.apply(accepted(request));
        response.header(HttpHeaderNames.CONTENT_TYPE, format.mediaType().toString());
        NettyDataBufferFactory buffers = new NettyDataBufferFactory(response.alloc());
        Flux<ByteBuf> chunks = source.range(start, end)
                .map(entry -> NettyDataBufferFactory.toByteBuf(format.encode(entry, buffers)));
        // A send completes when its buffers are written to the socket; one more group waits, read
        // ahead. Buffers dropped by a cancelled stream are released.
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

    private static List<MediaType> accepted(HttpServerRequest request) {
        try {
            return MediaType.parseMediaTypes(request.requestHeaders().getAll(HttpHeaderNames.ACCEPT));
        } catch (InvalidMediaTypeException unreadable) {
            return List.of();
        }
    }
}
