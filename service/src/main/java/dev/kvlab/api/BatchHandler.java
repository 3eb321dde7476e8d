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
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.springframework.http.MediaType;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * {@code POST /v0/entities/batch}: puts and deletes of many keys in one request ({@link BatchOps}),
 * each applied through the coordinator as a PUT or DELETE of it alone would be, with its own
 * version; not atomic across keys. The answer is {@code 200} once the whole batch is checked,
 * then one NDJSON line per operation in the order of the body, {@code {"key":"<base64>","status":201}}
 * (202 for a delete) when acknowledged, or its failure's status and {@code "error"}: a client knows
 * exactly which operations were acknowledged.
 *
 * <p>Bounded: the body by {@code kvlab.api.multi-key.max-batch-size}, held with its decoded values
 * on the memory budget until the batch ends (503 when there is no room, before anything is
 * applied); at most {@code window} operations in flight, the next one started as the client takes
 * the results; and at most {@code max-concurrent-requests} batches at once.
 */
final class BatchHandler {

    static final String PATH = "/v0/entities/batch";

    /** Room for the results' buffers: a line holds a base64 key, a status and at most a short message. */
    static final long LARGEST_RESULT = 4L * RequestParameters.MAX_KEY_BYTES + 4096;

    private static final byte[] KEY_PREFIX = "{\"key\":\"".getBytes(StandardCharsets.US_ASCII);

    private final Coordinator coordinator;
    private final TopologyProvider topology;
    private final ValueReader bodies;
    private final StreamAdmission admission;
    private final MultiKeyProperties limits;
    private final long maxValueSize;
    private final RequestMetrics metrics;

    BatchHandler(Coordinator coordinator, TopologyProvider topology, MemoryBudget budget, StreamAdmission admission,
                 MultiKeyProperties limits, long maxValueSize, RequestMetrics metrics) {
        this.coordinator = coordinator;
        this.topology = topology;
        this.bodies = new ValueReader(limits.maxBatchSize(), budget, "the batch", "kvlab.api.multi-key.max-batch-size");
        this.admission = admission;
        this.limits = limits;
        this.maxValueSize = maxValueSize;
        this.metrics = metrics;
    }

    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes.post(PATH, metrics.served("batch", this::batch));
    }

    /** Nothing is applied until the whole body is read and checked. */
    private Mono<Void> batch(HttpServerRequest request, HttpServerResponse response) {
        QueryParameters query = QueryParameters.ofTarget(request.uri());
        ReplicaCount replicas = Satisfiable.check(RequestParameters.replicas(query), topology);
        return bodies.read(request, (body, lease) -> {
            List<BatchOps.Op> ops = BatchOps.parse(body, Record.HEADER_BYTES, limits.maxBatchOps(), maxValueSize, lease);
            return admission.admit(() -> {
                response.header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_NDJSON_VALUE);
                ByteBufAllocator allocator = response.alloc();
                Flux<ByteBuf> results = Flux.fromIterable(ops)
                        .flatMapSequential(op -> apply(op, replicas, lease).map(result -> line(allocator, op.key(), result)), limits.window(), 1);
                return ChunkedStream.send(response, results);
            });
        });
    }

    /** The operation's result line's status and error; never an error itself. */
    private Mono<Result> apply(BatchOps.Op op, ReplicaCount replicas, MemoryBudget.Lease lease) {
        Mono<Void> applied = op.isPut() ? coordinator.put(op.key(), op.valueArray(), replicas, lease) : coordinator.delete(op.key(), replicas);
        return applied.then(Mono.fromSupplier(() -> new Result(op.isPut() ? 201 : 202, null)))
                .onErrorResume(failure -> Mono.just(new Result(KeyFailures.statusOf(failure), failure)));
    }

    private record Result(int status, Throwable failure) {
    }

    private static ByteBuf line(ByteBufAllocator allocator, byte[] key, Result result) {
        byte[] encodedKey = Base64.getEncoder().encode(key);
        String rest = "\",\"status\":" + result.status()
                + (result.failure() == null ? "}\n" : ",\"error\":\"" + KeyFailures.jsonText(result.failure()) + "\"}\n");
        byte[] tail = rest.getBytes(StandardCharsets.UTF_8);
        return allocator.buffer(KEY_PREFIX.length + encodedKey.length + tail.length).writeBytes(KEY_PREFIX).writeBytes(encodedKey).writeBytes(tail);
    }
}
