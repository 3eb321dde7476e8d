package dev.kvlab.api;

import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.ReplicaProtocol;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.function.BiFunction;
import org.springframework.http.MediaType;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The replica side of {@link ReplicaProtocol}: this node's own store, read and written with the
 * coordinators' versions. Never fans out. Served by Reactor Netty directly, on the client port or on
 * a replica port of its own ({@code kvlab.replication.port}).
 */
final class ReplicaHandler {

    private final LocalStore store;
    private final HybridLogicalClock clock;
    private final DataSize maxValueSize;

    ReplicaHandler(LocalStore store, HybridLogicalClock clock, DataSize maxValueSize) {
        this.store = store;
        this.clock = clock;
        this.maxValueSize = maxValueSize;
    }

    /** Adds the protocol's routes, the records stream included. */
    HttpServerRoutes addTo(HttpServerRoutes routes) {
        RangeHandler records = new RangeHandler(store::range, accepted -> RangeFormat.RECORDS, null);
        return routes
                .get(ReplicaProtocol.RECORD_PATH, guarded(this::read))
                .put(ReplicaProtocol.RECORD_PATH, guarded(this::write))
                .delete(ReplicaProtocol.RECORD_PATH, guarded(this::delete))
                .get(ReplicaProtocol.RECORDS_PATH, records::range);
    }

    private Mono<Void> read(HttpServerRequest request, HttpServerResponse response) {
        byte[] key = key(request);
        // Choose the answer first, then send it: a sent answer completes empty, so a
        // switchIfEmpty after the send would try to answer a second time.
        return store.get(key)
                .map(record -> sendRecord(response, record))
                .defaultIfEmpty(Mono.defer(() -> NettyResponses.plain(response, HttpResponseStatus.NOT_FOUND, "this replica has no record of the key")))
                .flatMap(answer -> answer);
    }

    private static Mono<Void> sendRecord(HttpServerResponse response, Record record) {
        return response.status(HttpResponseStatus.OK)
                .header(ReplicaProtocol.VERSION_HEADER, record.version().toString())
                .header(ReplicaProtocol.TOMBSTONE_HEADER, Boolean.toString(record.isTombstone()))
                .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                .send(Mono.just(Unpooled.wrappedBuffer(record.value())))
                .then();
    }

    private Mono<Void> write(HttpServerRequest request, HttpServerResponse response) {
        byte[] key = key(request);
        Version version = version(request);
        long length = request.requestHeaders().getInt(HttpHeaderNames.CONTENT_LENGTH, -1);
        if (length < 0) {
            return NettyResponses.closing(response, HttpResponseStatus.LENGTH_REQUIRED, "a replica write needs a Content-Length");
        }
        if (length > maxValueSize.toBytes()) {
            return NettyResponses.closing(response, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    new PayloadTooLargeException(maxValueSize).getMessage());
        }
        return request.receive().aggregate()
                .map(ReplicaHandler::valueArrayOf)
                .defaultIfEmpty(Record.newValueArray(0))
                .flatMap(value -> store.write(key, Record.value(version, value)))
                .then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.CREATED)));
    }

    private Mono<Void> delete(HttpServerRequest request, HttpServerResponse response) {
        byte[] key = key(request);
        Version version = version(request);
        return store.write(key, Record.tombstone(version))
                .then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.ACCEPTED)));
    }

    /** Turns a bad request into its 400 and an overloaded store into 503, like the client API. */
    private static BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> guarded(
            BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> handler) {
        return (request, response) -> Mono.defer(() -> handler.apply(request, response))
                .onErrorResume(BadRequestException.class,
                        e -> NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage()))
                .onErrorResume(java.util.concurrent.RejectedExecutionException.class,
                        e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, "the node is overloaded, retry later"));
    }

    private static byte[] valueArrayOf(ByteBuf body) {
        byte[] valueArray = Record.newValueArray(body.readableBytes());
        body.readBytes(valueArray, Record.HEADER_BYTES, body.readableBytes());
        return valueArray;
    }

    private static byte[] key(HttpServerRequest request) {
        return RequestParameters.requiredKey(QueryParameters.ofTarget(request.uri()), "id");
    }

    /** The coordinator's version; also moves this node's clock past it. */
    private Version version(HttpServerRequest request) {
        String header = request.requestHeaders().get(ReplicaProtocol.VERSION_HEADER);
        if (header == null) {
            throw new BadRequestException("a replica write needs the " + ReplicaProtocol.VERSION_HEADER + " header");
        }
        try {
            Version version = Version.parse(header);
            clock.observe(version);
            return version;
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
    }
}
