package dev.kvlab.peer;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.ChunkedStream;
import dev.kvlab.http.NettyResponses;
import dev.kvlab.http.PayloadTooLargeException;
import dev.kvlab.http.QueryParameters;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.http.StreamAdmission;
import dev.kvlab.http.ValueReader;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.replication.VersionTooFarAheadException;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The replica side of {@link ReplicaProtocol}: this node's own store, read and written with the
 * coordinators' versions. Never fans out. Served by Reactor Netty directly, on the client port or on
 * a replica port of its own ({@code kvlab.replication.port}).
 */
final class ReplicaHandler {

    /** A repair request names the nodes and holds a bitmap of buckets: a few hundred KiB at the most. */
    private static final int MAX_REPAIR_REQUEST_BYTES = 1 << 20;
    /**
     * The longest a repair round can plausibly take, from its start to its end's report: a round
     * scans the two nodes' shared records at a paced rate, a few minutes for a hundred million keys.
     */
    static final long MAX_REPAIR_ROUND_MILLIS = Duration.ofDays(1).toMillis();

    private final LocalStore store;
    private final HybridLogicalClock clock;
    private final SignedRoutes signed;
    private final DataSize maxValueSize;
    private final MemoryBudget budget;
    private final StreamAdmission rangeStreams;
    private final RepairResponder repair;
    private final ValueReader values;
    private final ReplicationProperties.Batch batchLimits;
    private final long maxBatchBytes;
    private final Leaving leaving;
    private final Sinks.Empty<Void> stopping = Sinks.empty();

    ReplicaHandler(LocalStore store, HybridLogicalClock clock, PeerAuthentication authentication, DataSize maxValueSize,
                   MemoryBudget budget, StreamAdmission rangeStreams, RepairResponder repair, ReplicationProperties.Batch batchLimits,
                   Leaving leaving) {
        this.store = store;
        this.clock = clock;
        this.signed = new SignedRoutes(authentication, budget);
        this.maxValueSize = maxValueSize;
        this.budget = budget;
        this.rangeStreams = rangeStreams;
        this.repair = repair;
        this.values = new ValueReader(maxValueSize, budget);
        this.batchLimits = batchLimits;
        this.leaving = leaving;
        // A sender fills a batch up to max-bytes, or sends one larger call alone.
        this.maxBatchBytes = Math.max(batchLimits.maxBytes().toBytes(),
                ReplicaBatch.largestCallBytes(RequestParameters.MAX_KEY_BYTES, maxValueSize.toBytes()));
    }

    /** Adds the protocol's routes, the records stream included; each takes signed calls only. */
    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes
                .post(ReplicaProtocol.BATCH_PATH, signed.peersOnly(false, this::batch))
                .post(ReplicaProtocol.STREAM_PATH, signed.peersOnly(true, this::stream))
                .get(ReplicaProtocol.RECORD_PATH, signed.peersOnly(false, SignedRoutes.withoutBody(this::read)))
                .put(ReplicaProtocol.RECORD_PATH, signed.peersOnly(false, this::write))
                .delete(ReplicaProtocol.RECORD_PATH, signed.peersOnly(false, SignedRoutes.withoutBody(this::delete)))
                .get(ReplicaProtocol.RECORDS_PATH, signed.peersOnly(false, SignedRoutes.withoutBody(this::records)))
                .post(ReplicaProtocol.REPAIR_BUCKETS_PATH, signed.peersOnly(false, this::repairBuckets))
                .post(ReplicaProtocol.REPAIR_CHANGES_PATH, signed.peersOnly(false, this::repairChanges))
                .post(ReplicaProtocol.REPAIR_DIGESTS_PATH, signed.peersOnly(false, this::repairDigests))
                .post(ReplicaProtocol.REPAIR_DONE_PATH, signed.peersOnly(false, this::repairDone));
    }

    /** One replica's record, its bytes held on the node's budget until they are written out. */
    private Mono<Void> read(HttpServerRequest request, HttpServerResponse response) {
        byte[] key = key(request);
        // Choose the answer first, then send it: a sent answer completes empty, so a
        // switchIfEmpty after the send would try to answer a second time.
        return Mono.usingWhen(Mono.fromSupplier(budget::lease), lease -> store.get(key, lease)
                        .map(record -> sendRecord(response, record))
                        .defaultIfEmpty(Mono.defer(() -> NettyResponses.plain(response, HttpResponseStatus.NOT_FOUND, "this replica has no record of the key")))
                        .flatMap(answer -> answer),
                ReplicaHandler::released);
    }

    private static Mono<Void> sendRecord(HttpServerResponse response, Record record) {
        if (record.expires()) {
            response.header(ReplicaProtocol.EXPIRES_AT_HEADER, Long.toString(record.expiresAtMillis()));
        }
        return response.status(HttpResponseStatus.OK)
                .header(ReplicaProtocol.VERSION_HEADER, record.version().toString())
                .header(ReplicaProtocol.TOMBSTONE_HEADER, Boolean.toString(record.isTombstone()))
                .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                .send(Mono.just(Unpooled.wrappedBuffer(record.value())))
                .then();
    }

    /**
     * Many calls in one request and one storage task. A body larger than both a full batch and the
     * largest single call is refused before it is read; the body is read on the budget and held
     * there, with the records its calls read, until the batch is answered.
     */
    private Mono<Void> batch(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
        return signed.body(request, response, call, maxBatchBytes, "a batch", (body, lease) -> run(ops(body), lease)
                .flatMap(outcomes -> response.status(HttpResponseStatus.OK)
                        .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                        .send(Mono.just(ReplicaBatch.answers(outcomes)))
                        .then()));
    }

    /**
     * A coordinator's batches, as frames, for as long as it sends them: each answered in order, as a
     * frame, in one storage task. Frames are taken out of each network buffer before it is
     * released, each held on the node's budget from its length on and its MAC checked before its
     * calls are used ({@link SignedFrames}), and read one at a time: the next once the storage has
     * answered the last and its answer is written, so a frame and the records it holds are on the
     * budget until then. Once the node stops, the stream answers the frames it has read and ends,
     * so the server's graceful shutdown does not wait for it; the coordinator opens a new stream
     * (here, after a restart, or fails fast). A bad first frame gets its 400 (401 without its MAC,
     * 503 without room); a bad frame later closes the connection, which fails the coordinator's stream.
     */
    private Mono<Void> stream(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
        SignedFrames frames = new SignedFrames(maxBatchBytes + PeerAuthentication.TAG_BYTES, budget, call.frames());
        response.status(HttpResponseStatus.OK).header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE);
        return request.receive()
                .map(buffer -> frames.decode(buffer.nioBuffer()))
                .concatMapIterable(decoded -> decoded, 1)
                .takeUntilOther(stopping.asMono())
                .concatMap(frame -> Mono.usingWhen(Mono.just(frame),
                        // A Flux, not a Mono: Reactor Netty sends a Mono as the whole response.
                        held -> run(ops(held.calls()), held.lease())
                                .flatMap(outcomes -> response.send(Flux.just(ReplicaBatch.answerFrame(outcomes))).then()),
                        held -> Mono.fromRunnable(() -> frames.done(held))), 1)
                .doFinally(signal -> frames.releaseAll())
                .then();
    }

    private static Mono<Void> released(MemoryBudget.Lease lease) {
        return Mono.fromRunnable(lease::release);
    }

    /**
     * The replica's records in {@code [start, end)}, tombstones included, in key order, as
     * {@link RecordFrames}, streamed while the coordinator reads them; at most
     * {@code kvlab.replication.max-range-streams} at once, each with room for its buffers.
     */
    private Mono<Void> records(HttpServerRequest request, HttpServerResponse response) {
        QueryParameters query = QueryParameters.ofTarget(request.uri());
        byte[] start = RequestParameters.requiredKey(query, "start");
        byte[] end = RequestParameters.optionalKey(query, "end");
        return rangeStreams.admit(() -> {
            response.header(HttpHeaderNames.CONTENT_TYPE, ReplicaProtocol.RECORDS_MEDIA_TYPE);
            NettyDataBufferFactory buffers = new NettyDataBufferFactory(response.alloc());
            return ChunkedStream.send(response, store.range(start, end)
                    .map(entry -> NettyDataBufferFactory.toByteBuf(RecordFrames.encode(entry, buffers))));
        });
    }

    /** A repair round's first step: the hashes of the buckets of what this node shares with the initiator. */
    private Mono<Void> repairBuckets(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
        return repairRequest(request, response, call, asked -> repair.buckets(asked)
                .flatMap(hashes -> {
                    ByteBuffer body = ByteBuffer.allocate(hashes.length * Long.BYTES);
                    body.asLongBuffer().put(hashes);
                    return response.status(HttpResponseStatus.OK)
                            .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                            .send(Mono.just(Unpooled.wrappedBuffer(body.array())))
                            .then();
                }));
    }

    /** A repair round's first step, with the keys changed recently ({@link RepairChanges}). */
    private Mono<Void> repairChanges(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
        return signed.body(request, response, call, MAX_REPAIR_REQUEST_BYTES, "a changed keys request", (body, lease) -> {
            RepairChanges.Request asked;
            try {
                asked = RepairChanges.Request.decode(body, RequestParameters.MAX_KEY_BYTES);
            } catch (IllegalArgumentException e) {
                throw new BadRequestException("bad changed keys request: " + e.getMessage());
            }
            lease.release();
            return repair.changes(asked).flatMap(changes -> response.status(HttpResponseStatus.OK)
                    .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_OCTET_STREAM_VALUE)
                    .send(Mono.just(Unpooled.wrappedBuffer(changes.encode())))
                    .then());
        });
    }

    /** A repair round's second step: the keys and headers of the shared records in the differing buckets. */
    private Mono<Void> repairDigests(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
        return repairRequest(request, response, call, asked -> rangeStreams.admit(() -> {
            response.header(HttpHeaderNames.CONTENT_TYPE, ReplicaProtocol.RECORDS_MEDIA_TYPE);
            NettyDataBufferFactory buffers = new NettyDataBufferFactory(response.alloc());
            return ChunkedStream.send(response, repair.digests(asked)
                    .map(keyed -> NettyDataBufferFactory.toByteBuf(RecordFrames.encode(new Entry(keyed.key(), Record.of(keyed.header())), buffers))));
        }));
    }

    /**
     * A repair round's end, as its initiator reports it: {@code [initiator length:2][initiator][started ms:8]}.
     * The start decides when tombstones may be purged ({@code TombstoneGrace}), so it must be
     * plausible: not after the report was signed (by the initiator's clock, itself within the
     * skew of this node's), nor more than {@link #MAX_REPAIR_ROUND_MILLIS} before it; otherwise 400
     * and nothing changes.
     */
    private Mono<Void> repairDone(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
        return signed.body(request, response, call, MAX_REPAIR_REQUEST_BYTES, "a repair round's end", (body, lease) -> {
            String initiator;
            long started;
            try {
                byte[] name = new byte[Short.toUnsignedInt(body.getShort())];
                body.get(name);
                initiator = new String(name, StandardCharsets.UTF_8);
                started = body.getLong();
            } catch (BufferUnderflowException e) {
                throw new BadRequestException("a repair round's end cut short");
            }
            if (body.hasRemaining()) {
                throw new BadRequestException("a repair round's end with bytes after its end");
            }
            long reported = call.signedMillis();
            if (started > reported || started < reported - MAX_REPAIR_ROUND_MILLIS) {
                throw new BadRequestException("a repair round's end says the round began at " + started + " ms, "
                        + (started > reported ? "after its end was reported" : "more than a day before its end was reported")
                        + ": not taken");
            }
            repair.roundDone(initiator, started);
            return NettyResponses.empty(response, HttpResponseStatus.NO_CONTENT);
        });
    }

    /** A repair round's request ({@link RepairRequest}), read and checked as {@link SignedRoutes#body} does, for {@code use}. */
    private Mono<Void> repairRequest(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call,
                                     java.util.function.Function<RepairRequest, Mono<Void>> use) {
        return signed.body(request, response, call, MAX_REPAIR_REQUEST_BYTES, "a repair request", (body, lease) -> {
            RepairRequest asked;
            try {
                asked = RepairRequest.decode(body);
            } catch (IllegalArgumentException e) {
                throw new BadRequestException("bad repair request: " + e.getMessage());
            }
            // The request is decoded: its body is not held while the scan that answers it runs.
            lease.release();
            return use.apply(asked);
        });
    }

    /** Ends the coordinators' streams: called as the node starts to stop, before the server drains. */
    void endStreams() {
        stopping.tryEmitEmpty();
    }

    /** A batch's calls. */
    private List<StoreOp> ops(ByteBuffer body) {
        try {
            return ReplicaBatch.decodeCalls(body, batchLimits.maxCalls(), RequestParameters.MAX_KEY_BYTES, maxValueSize.toBytes());
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("bad batch: " + e.getMessage());
        }
    }

    /**
     * The outcome of each call. A write is refused alone when this node's clock does not admit its
     * version ({@link HybridLogicalClock#admit}) or the lease has no room for its record, or when
     * this node is leaving and holds its version already ({@link #heldAlready}); the rest are
     * stored as {@link #stored} says, the records they read held on the lease too.
     */
    private Mono<List<Outcome>> run(List<StoreOp> ops, MemoryBudget.Lease lease) {
        if (leaving.isLeaving() && ops.stream().anyMatch(op -> op instanceof StoreOp.Write)) {
            return heldAlready(ops, lease).flatMap(refused -> run(ops, refused, lease));
        }
        return run(ops, new Outcome[ops.size()], lease);
    }

    /**
     * A leaving node's refusals of writes of a version it holds already (or older): it takes no copy
     * back of what its leave handed on. The other nodes still reckon it an owner of some of those
     * records, and their handoff would otherwise send them back to it and delete their own copies
     * once it took them, and the records would leave the cluster with it. Refused, the sender keeps
     * its copy. Writes that bring something newer, as clients' writes do, are taken as ever.
     */
    private Mono<Outcome[]> heldAlready(List<StoreOp> ops, MemoryBudget.Lease lease) {
        List<Integer> writes = new ArrayList<>();
        List<StoreOp> reads = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i) instanceof StoreOp.Write write) {
                writes.add(i);
                reads.add(new StoreOp.Read(write.key()));
            }
        }
        return store.batch(reads, lease).map(found -> {
            Outcome[] refused = new Outcome[ops.size()];
            for (int j = 0; j < writes.size(); j++) {
                int i = writes.get(j);
                if (found.get(j) instanceof Outcome.Found held
                        && !((StoreOp.Write) ops.get(i)).record().version().isNewerThan(held.record().version())) {
                    refused[i] = new Outcome.Failed(new IllegalStateException(
                            "this node is leaving the cluster and holds this record already: it takes no copy of it back"));
                }
            }
            return refused;
        });
    }

    private Mono<List<Outcome>> run(List<StoreOp> ops, Outcome[] refused, MemoryBudget.Lease lease) {
        List<StoreOp> admitted = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            if (refused[i] != null) {
                continue;
            }
            try {
                if (ops.get(i) instanceof StoreOp.Write write) {
                    clock.admit(write.record().version());
                    lease.hold(write.record().encoded().length);
                }
                admitted.add(ops.get(i));
            } catch (VersionTooFarAheadException | OverBudgetException e) {
                refused[i] = new Outcome.Failed(e);
            }
        }
        if (admitted.size() == ops.size()) {
            return stored(ops, lease);
        }
        Mono<List<Outcome>> stored = admitted.isEmpty() ? Mono.just(List.of()) : stored(admitted, lease);
        return stored.map(outcomes -> {
            List<Outcome> all = new ArrayList<>(ops.size());
            int next = 0;
            for (Outcome outcome : refused) {
                all.add(outcome != null ? outcome : outcomes.get(next++));
            }
            return all;
        });
    }

    /**
     * The outcomes of calls that passed admission. Writes alone join the store's group commit
     * ({@link LocalStore#write}), beside this node's own writes and the other coordinators': one
     * RocksDB write (one WAL append) a group, where a batch of its own would be one more. Reads
     * alone go the way this node's own reads go ({@link LocalStore#get}): a record in memory is
     * answered on this thread, without a hop to a storage thread and back for the frame. A batch
     * with both runs as one storage task, so each read sees the writes before it.
     */
    private Mono<List<Outcome>> stored(List<StoreOp> ops, MemoryBudget.Lease lease) {
        boolean writes = false;
        boolean reads = false;
        for (StoreOp op : ops) {
            if (op instanceof StoreOp.Write) {
                writes = true;
            } else {
                reads = true;
            }
        }
        if (writes && reads) {
            return store.batch(ops, lease);
        }
        if (ops.isEmpty()) {
            return Mono.just(List.of()); // no call would complete the sink below
        }
        return Mono.create(sink -> {
            Outcome[] outcomes = new Outcome[ops.size()];
            AtomicInteger left = new AtomicInteger(ops.size());
            for (int i = 0; i < ops.size(); i++) {
                int call = i;
                Mono<Outcome> outcome = switch (ops.get(i)) {
                    case StoreOp.Write write -> store.write(write.key(), write.record()).thenReturn(Outcome.DONE);
                    case StoreOp.Read read -> store.get(read.key(), lease).map(Outcome::ofRead).defaultIfEmpty(Outcome.ABSENT);
                };
                outcome.subscribe(done -> {
                    outcomes[call] = done;
                    answerWhenLast(left, outcomes, sink);
                }, error -> {
                    outcomes[call] = new Outcome.Failed(error instanceof RuntimeException failure ? failure : new IllegalStateException(error));
                    answerWhenLast(left, outcomes, sink);
                });
            }
        });
    }

    /** The batch's answer once its last call has its outcome; the counter's decrement publishes the others' outcomes. */
    private static void answerWhenLast(AtomicInteger left, Outcome[] outcomes, MonoSink<List<Outcome>> sink) {
        if (left.decrementAndGet() == 0) {
            sink.success(List.of(outcomes));
        }
    }

    /** A single replica write: the value is read on the budget ({@link ValueReader}) and checked against the signature before it is stored. */
    private Mono<Void> write(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call) {
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
        return values.read(request, (value, lease) -> {
                    call.checkBody(value, Record.HEADER_BYTES, value.length - Record.HEADER_BYTES);
                    return store.write(key, Record.value(version, value));
                })
                .then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.CREATED)));
    }

    private Mono<Void> delete(HttpServerRequest request, HttpServerResponse response) {
        byte[] key = key(request);
        Version version = version(request);
        return store.write(key, Record.tombstone(version))
                .then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.ACCEPTED)));
    }

    private static byte[] key(HttpServerRequest request) {
        return RequestParameters.requiredKey(QueryParameters.ofTarget(request.uri()), "id");
    }

    /** The coordinator's version, if this node's clock admits it ({@link HybridLogicalClock#admit}). */
    private Version version(HttpServerRequest request) {
        String header = request.requestHeaders().get(ReplicaProtocol.VERSION_HEADER);
        if (header == null) {
            throw new BadRequestException("a replica write needs the " + ReplicaProtocol.VERSION_HEADER + " header");
        }
        Version version;
        try {
            version = Version.parse(header);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
        clock.admit(version);
        return version;
    }
}
