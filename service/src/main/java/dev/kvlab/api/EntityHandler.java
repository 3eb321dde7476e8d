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
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import org.springframework.http.MediaType;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * {@code /v0/entity}: GET, HEAD, PUT and DELETE of one key through the coordinator.
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

    /** The replicas' answers are held on the node's budget until the value is written out (and the coordinator is done with them). */
    private Mono<Void> get(HttpServerRequest request, HttpServerResponse response) {
        KeyAndReplicas asked = KeyAndReplicas.of(request);
        RequestParameters.noTtl(asked.query(), "GET");
        // Choose the answer first, then send it: a sent answer completes empty, so a
        // switchIfEmpty after the send would answer a second time.
        return Mono.usingWhen(Mono.fromSupplier(budget::lease), lease -> coordinator.get(asked.key(), asked.replicas(), lease)
                        .map(record -> sendValue(response, record))
                        .defaultIfEmpty(Mono.defer(() -> NettyResponses.plain(response, HttpResponseStatus.NOT_FOUND, "no value for this id")))
                        .flatMap(answer -> answer),
                lease -> Mono.fromRunnable(lease::release));
    }

    private static Mono<Void> sendValue(HttpServerResponse response, Record record) {
        return response.status(HttpResponseStatus.OK)
                .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(record.valueLength()))
                .send(Mono.just(Unpooled.wrappedBuffer(record.value())))
                .then();
    }

    /** A PUT with {@code ttl} reads its value behind the longer header of an expiring record. */
    private Mono<Void> put(HttpServerRequest request, HttpServerResponse response) {
        KeyAndReplicas asked = KeyAndReplicas.of(request);
        Duration ttl = RequestParameters.ttl(asked.query(), maxTtl);
        Mono<Void> stored = ttl == null
                ? values.read(request, (value, lease) -> coordinator.put(asked.key(), value, asked.replicas(), lease))
                : values.read(request, Record.headerBytes(true), (value, lease) -> coordinator.put(asked.key(), value, asked.replicas(), ttl, lease));
        return stored.then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.CREATED)));
    }

    private Mono<Void> delete(HttpServerRequest request, HttpServerResponse response) {
        KeyAndReplicas asked = KeyAndReplicas.of(request);
        RequestParameters.noTtl(asked.query(), "DELETE");
        return coordinator.delete(asked.key(), asked.replicas())
                .then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.ACCEPTED)));
    }

    /** The {@code id} and {@code replicas} of a request, and its query; a bad one is a {@link BadRequestException}. */
    private record KeyAndReplicas(byte[] key, ReplicaCount replicas, QueryParameters query) {

        static KeyAndReplicas of(HttpServerRequest request) {
            QueryParameters query = QueryParameters.ofTarget(request.uri());
            return new KeyAndReplicas(RequestParameters.requiredKey(query, "id"), RequestParameters.replicas(query), query);
        }
    }
}
