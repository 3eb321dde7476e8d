package dev.kvlab.api;

import dev.kvlab.http.ChunkedStream;
import dev.kvlab.http.QueryParameters;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.http.StreamAdmission;
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
import reactor.netty.http.server.HttpServerRoutes;

/**
 * {@code /v0/entities}: the cluster's live keys in {@code [start, end)}, merged by the coordinator
 * and streamed as chunks while the client reads them ({@link ChunkedStream}), in the format the
 * client asked for ({@link RangeFormat}). At most {@code kvlab.api.max-concurrent-ranges} at once,
 * each with room for its buffers on the node's memory budget ({@link StreamAdmission}); more get
 * 503.
 */
final class RangeHandler {

    static final String PATH = "/v0/entities";

    private final Coordinator coordinator;
    private final StreamAdmission admission;
    private final RequestMetrics metrics;

    RangeHandler(Coordinator coordinator, StreamAdmission admission, RequestMetrics metrics) {
        this.coordinator = coordinator;
        this.admission = admission;
        this.metrics = metrics;
    }

    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes.get(PATH, metrics.served("range", this::range));
    }

    /** A bad request gets its 400 before the range asks for room. */
    private Mono<Void> range(HttpServerRequest request, HttpServerResponse response) {
        QueryParameters query = QueryParameters.ofTarget(request.uri());
        byte[] start = RequestParameters.requiredKey(query, "start");
        byte[] end = RequestParameters.optionalKey(query, "end");
        RangeFormat format = RangeFormat.negotiate(accepted(request));
        return admission.admit(() -> {
            response.header(HttpHeaderNames.CONTENT_TYPE, format.mediaType().toString());
            NettyDataBufferFactory buffers = new NettyDataBufferFactory(response.alloc());
            Flux<ByteBuf> chunks = coordinator.range(start, end)
                    .map(entry -> NettyDataBufferFactory.toByteBuf(format.encode(entry, buffers)));
            return ChunkedStream.send(response, chunks);
        });
    }

    /** The media types the client accepts; an unreadable Accept header counts as none. */
    static List<MediaType> accepted(HttpServerRequest request) {
        try {
            return MediaType.parseMediaTypes(request.requestHeaders().getAll(HttpHeaderNames.ACCEPT));
        } catch (InvalidMediaTypeException unreadable) {
            return List.of();
        }
    }
}
