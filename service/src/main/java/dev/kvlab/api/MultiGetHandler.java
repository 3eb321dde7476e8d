package dev.kvlab.api;

import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.http.ChunkedStream;
import dev.kvlab.http.QueryParameters;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.http.StreamAdmission;
import dev.kvlab.http.ValueReader;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.ReplicaCount;
import dev.kvlab.storage.Record;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * {@code POST /v0/entities/get}, the keys listed in the body, and
 * {@code GET /v0/entities/get?id=..&id=..}, the keys in the query ({@link KeyList}); from there on
 * one code path: each key read through the coordinator as a GET of it alone would be (its
 * {@code ack/from}, read repair), answered in the order asked, in a range's format with each key's
 * status ({@link MultiGetFormat}).
 *
 * <p>Bounded: the body by {@code kvlab.api.multi-key.max-keys} and held on the memory budget while
 * the request runs (a query by the same limit and by the request line's,
 * {@code server.netty.max-initial-line-length}); at most {@code window} keys are read at once, each
 * answer's bytes held on the budget until written out; the next key is read only as the client
 * takes the answers (a slow client stops the reads, nothing piles up); and the stream takes its
 * room like a range does ({@link StreamAdmission}).
 */
final class MultiGetHandler {

    static final String PATH = "/v0/entities/get";

    private final Coordinator coordinator;
    private final TopologyProvider topology;
    private final MemoryBudget budget;
    private final ValueReader bodies;
    private final StreamAdmission admission;
    private final MultiKeyProperties limits;
    private final RequestMetrics metrics;

    MultiGetHandler(Coordinator coordinator, TopologyProvider topology, MemoryBudget budget, StreamAdmission admission,
                    MultiKeyProperties limits, RequestMetrics metrics) {
        this.coordinator = coordinator;
        this.topology = topology;
        this.budget = budget;
        this.bodies = new ValueReader(limits.maxKeysSize(), budget, "the list of keys", "kvlab.api.multi-key.max-keys, each key at most "
                + RequestParameters.MAX_KEY_BYTES + " bytes and a newline");
        this.admission = admission;
        this.limits = limits;
        this.metrics = metrics;
    }

    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes.post(PATH, metrics.served("multiget", this::keysInBody))
                .get(PATH, metrics.served("multiget", this::keysInQuery));
    }

    /** A bad request gets its 400 (or 413) before the stream asks for room. */
    private Mono<Void> keysInBody(HttpServerRequest request, HttpServerResponse response) {
        QueryParameters query = QueryParameters.ofTarget(request.uri());
        ReplicaCount replicas = Satisfiable.check(RequestParameters.replicas(query), topology);
        RangeFormat format = RangeFormat.negotiate(RangeHandler.accepted(request));
        KeyList.noneInQuery(query);
        return bodies.read(request, (body, bodyLease) ->
                multiGet(KeyList.parse(body, Record.HEADER_BYTES, limits.maxKeys()), replicas, format, response));
    }

    /** The same request with the keys as {@code id} parameters; checked in the same order. */
    private Mono<Void> keysInQuery(HttpServerRequest request, HttpServerResponse response) {
        QueryParameters query = QueryParameters.ofTarget(request.uri());
        ReplicaCount replicas = Satisfiable.check(RequestParameters.replicas(query), topology);
        RangeFormat format = RangeFormat.negotiate(RangeHandler.accepted(request));
        return multiGet(KeyList.ofQuery(query, limits.maxKeys()), replicas, format, response);
    }

    /** The answers to {@code keys}, streamed once the request has room. */
    private Mono<Void> multiGet(List<byte[]> keys, ReplicaCount replicas, RangeFormat format, HttpServerResponse response) {
        return admission.admit(() -> {
            response.header(HttpHeaderNames.CONTENT_TYPE, format.mediaType().toString());
            MultiGetFormat encoder = new MultiGetFormat(format, response.alloc());
            Flux<ByteBuf> chunks = Flux.fromIterable(keys)
                    .flatMapSequential(key -> answer(key, replicas), limits.window(), 1)
                    .<ByteBuf>handle((answer, sink) -> {
                        try {
                            ByteBuf chunk = encoder.encode(answer);
                            if (chunk != null) {
                                sink.next(chunk);
                            }
                        } catch (RuntimeException failed) {
                            sink.error(failed);
                        } finally {
                            answer.release();
                        }
                    })
                    // Answers read ahead and dropped by a cancelled or failed stream give their bytes back.
                    .doOnDiscard(KeyAnswer.class, KeyAnswer::release);
            return ChunkedStream.send(response, chunks);
        });
    }

    /** The key's answer, never an error: a failure is the key's status. */
    private Mono<KeyAnswer> answer(byte[] key, ReplicaCount replicas) {
        return Mono.defer(() -> {
            MemoryBudget.Lease lease = budget.lease();
            AtomicBoolean released = new AtomicBoolean();
            return coordinator.get(key, replicas, lease)
                    .map(record -> KeyAnswer.found(key, record, lease, released))
                    .defaultIfEmpty(KeyAnswer.missing(key, lease, released))
                    .onErrorResume(failure -> Mono.just(KeyAnswer.failed(key, failure, lease, released)))
                    .doOnCancel(() -> {
                        if (released.compareAndSet(false, true)) {
                            lease.release();
                        }
                    });
        });
    }
}
