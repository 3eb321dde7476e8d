package dev.kvlab.api;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.ChunkedStream;
import dev.kvlab.http.HttpErrors;
import dev.kvlab.http.QueryParameters;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.replication.Coordinator;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.List;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * {@code /v0/entities}: the cluster's live keys in {@code [start, end)}, merged by the coordinator
 * and streamed as chunks while the client reads them ({@link ChunkedStream}), in the format the
 * client asked for ({@link RangeFormat}).
 */
final class RangeHandler {

    private final Coordinator coordinator;
    private final RequestMetrics metrics;

    RangeHandler(Coordinator coordinator, RequestMetrics metrics) {
        this.coordinator = coordinator;
        this.metrics = metrics;
    }

    Mono<Void> range(HttpServerRequest request, HttpServerResponse response) {
        long started = System.nanoTime();
        return stream(request, response)
                .doOnSuccess(done -> metrics.record("range", response.status().code(), started))
                .doOnError(error -> metrics.record("range", 500, started));
    }

    private Mono<Void> stream(HttpServerRequest request, HttpServerResponse response) {
        byte[] start;
        byte[] end;
        try {
            QueryParameters query = QueryParameters.ofTarget(request.uri());
            start = RequestParameters.requiredKey(query, "start");
            end = RequestParameters.optionalKey(query, "end");
        } catch (BadRequestException e) {
            return HttpErrors.send(request, response, e);
        }
        RangeFormat format = RangeFormat.negotiate(accepted(request));
        response.header(HttpHeaderNames.CONTENT_TYPE, format.mediaType().toString());
        NettyDataBufferFactory buffers = new NettyDataBufferFactory(response.alloc());
        Flux<ByteBuf> chunks = coordinator.range(start, end)
                .map(entry -> NettyDataBufferFactory.toByteBuf(format.encode(entry, buffers)));
        return ChunkedStream.send(response, chunks);
    }

    private static List<MediaType> accepted(HttpServerRequest request) {
        try {
            return MediaType.parseMediaTypes(request.requestHeaders().getAll(HttpHeaderNames.ACCEPT));
        } catch (InvalidMediaTypeException unreadable) {
            return List.of();
        }
    }
}
