package dev.kvlab.api;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.NettyResponses;
import dev.kvlab.http.QueryParameters;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.http.ValueReader;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.ReplicaCount;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import java.util.Optional;
import org.springframework.http.MediaType;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * {@code /v0/entity}: GET, HEAD, PUT and DELETE of one key through the coordinator, conditional
 * on the key's entity tag when the request says so ({@link Preconditions}).
 *
 * <p>Served by Reactor Netty directly, like the ranges: WebFlux's dispatch (exchange, handler
 * mapping, filters, response writer) took about 20 µs of node CPU per request, a third of what
 * one node spent on a GET (docs/notes/2026-11-22-lab-measurements.md). Other methods on the path fall through to
 * WebFlux, which answers 405.
 */
final class EntityHandler {

    static final String PATH = "/v0/entity";

    private final Coordinator coordinator;
    private final MemoryBudget budget;
    private final ValueReader values;
    private final RequestMetrics metrics;
    /** The longest {@code ttl} a PUT may ask for. */
    private final Duration maxTtl;

    EntityHandler(Coordinator coordinator, MemoryBudget budget, ValueReader values, RequestMetrics metrics, Duration maxTtl) {
        this.coordinator = coordinator;
        this.budget = budget;
        this.values = values;
        this.metrics = metrics;
        this.maxTtl = maxTtl;
    }

    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes.get(PATH, metrics.served("get", this::get))
                .head(PATH, metrics.served("get", this::get))
                .put(PATH, metrics.served("put", this::put))
                .delete(PATH, metrics.served("delete", this::delete));
    }

    /**
     * The replicas' answers are held on the node's budget until the value is written out (and the
     * coordinator is done with them). A value is answered with its {@link EntityTag}; a 404 has none.
     */
    private Mono<Void> get(HttpServerRequest request, HttpServerResponse response) {
        KeyAndReplicas asked = KeyAndReplicas.of(request);
        RequestParameters.noTtl(asked.query(), "GET");
        Preconditions conditions = Preconditions.ofRead(request.requestHeaders());
        // Choose the answer first, then send it: a sent answer completes empty, so a
        // switchIfEmpty after the send would answer a second time.
        return Mono.usingWhen(Mono.fromSupplier(budget::lease), lease -> coordinator.get(asked.key(), asked.replicas(), lease)
                        .map(record -> answer(response, record, conditions))
                        .defaultIfEmpty(Mono.defer(() -> NettyResponses.plain(response, HttpResponseStatus.NOT_FOUND, "no value for this id")))
                        .flatMap(answer -> answer),
                lease -> Mono.fromRunnable(lease::release));
    }

    /** The value, or 304 Not Modified when If-None-Match lists its tag; 412 when If-Match does not. */
    private static Mono<Void> answer(HttpServerResponse response, Record record, Preconditions conditions) {
        String tag = EntityTag.of(record.version());
        if (conditions.notModified(EntityTag.opaque(record.version()))) {
            return response.status(HttpResponseStatus.NOT_MODIFIED).header(HttpHeaderNames.ETAG, tag).send().then();
        }
        return response.status(HttpResponseStatus.OK)
                .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(record.valueLength()))
                .header(HttpHeaderNames.ETAG, tag)
                .send(Mono.just(Unpooled.wrappedBuffer(record.value())))
                .then();
    }

    /**
     * A PUT with {@code ttl} reads its value behind the longer header of an expiring record. A
     * conditional PUT reads the key at the request's {@code ack/from} once the value has arrived,
     * checks the conditions against what it found, and writes under a newer version; its 201
     * carries the new value's ETag. An unconditional one answers as it always has.
     */
    private Mono<Void> put(HttpServerRequest request, HttpServerResponse response) {
        KeyAndReplicas asked = KeyAndReplicas.of(request);
        Duration ttl = RequestParameters.ttl(asked.query(), maxTtl);
        int header = Record.headerBytes(ttl != null);
        Preconditions conditions = Preconditions.ofWrite(request.requestHeaders());
        if (conditions.isEmpty()) {
            return values.read(request, header, (value, lease) -> coordinator.put(asked.key(), value, asked.replicas(), ttl, lease))
                    .then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.CREATED)));
        }
        return values.read(request, header, (value, lease) -> checked(asked, conditions, lease)
                        .flatMap(found -> coordinator.putAfter(asked.key(), value, asked.replicas(), ttl, lease, found.orElse(null))))
                .flatMap(version -> response.status(HttpResponseStatus.CREATED).header(HttpHeaderNames.ETAG, EntityTag.of(version)).send().then());
    }

    /** A conditional DELETE reads, checks and writes its tombstone as a conditional PUT does. */
    private Mono<Void> delete(HttpServerRequest request, HttpServerResponse response) {
        KeyAndReplicas asked = KeyAndReplicas.of(request);
        RequestParameters.noTtl(asked.query(), "DELETE");
        Preconditions conditions = Preconditions.ofWrite(request.requestHeaders());
        Mono<?> deleted = conditions.isEmpty()
                ? coordinator.delete(asked.key(), asked.replicas())
                : Mono.usingWhen(Mono.fromSupplier(budget::lease),
                        lease -> checked(asked, conditions, lease).flatMap(found -> coordinator.deleteAfter(asked.key(), asked.replicas(), found.orElse(null))),
                        lease -> Mono.fromRunnable(lease::release));
        return deleted.then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.ACCEPTED)));
    }

    /**
     * The version of the key's newest record (a tombstone included: the write must come after it)
     * once the conditions have held against it; a {@link dev.kvlab.http.PreconditionFailedException}
     * when they do not. Only the record's header is used; its value is let go with the lease.
     */
    private Mono<Optional<Version>> checked(KeyAndReplicas asked, Preconditions conditions, MemoryBudget.Lease lease) {
        return coordinator.newest(asked.key(), asked.replicas(), lease)
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .map(found -> {
                    Record live = found.filter(coordinator::isLive).orElse(null);
                    conditions.checkWrite(live == null ? null : EntityTag.opaque(live.version()));
                    return found.map(Record::version);
                });
    }

    /** The {@code id} and {@code replicas} of a request, and its query; a bad one is a {@link BadRequestException}. */
    private record KeyAndReplicas(byte[] key, ReplicaCount replicas, QueryParameters query) {

        static KeyAndReplicas of(HttpServerRequest request) {
            QueryParameters query = QueryParameters.ofTarget(request.uri());
            return new KeyAndReplicas(RequestParameters.requiredKey(query, "id"), RequestParameters.replicas(query), query);
        }
    }
}
