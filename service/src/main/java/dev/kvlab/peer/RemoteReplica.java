package dev.kvlab.peer;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.Replica;
import dev.kvlab.replication.ReplicaException;
import dev.kvlab.replication.ReplicationMetrics;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.replication.TimeoutTimer;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A replica on another node, reached over {@link ReplicaProtocol} with the shared, pooled
 * {@link WebClient}: single-key calls travel in batches ({@link PeerBatcher}), by default on a
 * long-lived stream to the peer ({@link PeerStream}), a range as a stream of its own. Calls with
 * large records ({@link ReplicationProperties.Batch#isLarge}) have a batcher and a stream of their
 * own: a peer answers one stream's frames in order, and a small call's answer is not to wait
 * behind a megabyte's. Every call
 * fails (never hangs) when the peer does not answer in time: a single-key call within
 * {@code timeout} (waiting for its batch included), a range's first entry within {@code timeout}
 * and each next one within {@code rangeIdleTimeout}. A call cut short by its timeout closes its
 * connection (a stream's too), so a dead peer's connections leave the pool as they fail.
 */
public final class RemoteReplica implements Replica {

    private final String node;
    private final String name;
    private final WebClient client;
    private final PeerAuthentication authentication;
    private final URI batchUri;
    private final ReplicationProperties.Batch batching;
    private final PeerBatcher small;
    private final PeerBatcher large;
    private final TimeoutTimer timer;
    private final Duration timeout;
    private final Duration rangeIdleTimeout;
    private final int maxKeyLength;
    private final long maxValueLength;

    /** {@code authentication} signs each call for {@code node}, body included. */
    public RemoteReplica(String node, WebClient client, PeerAuthentication authentication, TimeoutTimer timer, Duration timeout,
                         Duration rangeIdleTimeout, int maxKeyLength, long maxValueLength, ReplicationProperties.Batch batching,
                         ReplicationMetrics metrics) {
        this.node = node;
        this.name = "replica " + node;
        this.client = client;
        this.authentication = authentication;
        this.batchUri = URI.create(node + ReplicaProtocol.BATCH_PATH);
        this.timer = timer;
        this.timeout = timeout;
        this.rangeIdleTimeout = rangeIdleTimeout;
        this.maxKeyLength = maxKeyLength;
        this.maxValueLength = maxValueLength;
        this.batching = batching;
        this.small = lane(metrics);
        this.large = batching.isLarge(maxValueLength) ? lane(metrics) : small;
    }

    /** A batcher with a stream of its own (or a request per batch). */
    private PeerBatcher lane(ReplicationMetrics metrics) {
        PeerBatcher.Sender sender = batching.stream() ? streamed(new PeerStream(node, client, authentication, batching.maxInFlight(), maxValueLength,
                (long) batching.maxCalls() * ReplicaBatch.largestAnswerBytes(maxValueLength))) : this::send;
        return new PeerBatcher(node, sender, batching, metrics::batchSent);
    }

    /** The lane of a call whose record takes {@code bytes}. */
    private PeerBatcher laneFor(long bytes) {
        return batching.isLarge(bytes) ? large : small;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key, MemoryBudget.Lease lease) {
        return read(key, 0, lease);
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key, long expectedBytes, MemoryBudget.Lease lease) {
        return inTime(laneFor(expectedBytes).call(new StoreOp.Read(key), lease));
    }

    @Override
    public Mono<Void> write(byte[] key, Record record) {
        return inTime(laneFor(record.encoded().length).call(new StoreOp.Write(key, record), null)).then();
    }

    /** Batches on the peer's stream, each failing (and ending the stream) when not answered in time. */
    private PeerBatcher.Sender streamed(PeerStream stream) {
        return (ops, leases) -> inTime(stream.send(ops, leases));
    }

    /**
     * One batch of calls to this peer in a request of its own ({@link ReplicaBatch}), answered in
     * order; the answer is decoded as it arrives, each record held on its call's lease.
     */
    private Mono<List<Outcome>> send(List<StoreOp> ops, List<MemoryBudget.Lease> leases) {
        byte[] body = ReplicaBatch.encodeCalls(ops);
        return inTime(client.post().uri(batchUri)
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .header(HttpHeaders.AUTHORIZATION, authentication.authorization(node, "POST", ReplicaProtocol.BATCH_PATH, null, body))
                .bodyValue(DefaultDataBufferFactory.sharedInstance.wrap(body))
                .exchangeToMono(response -> {
                    if (response.statusCode().value() != HttpStatus.OK.value()) {
                        return failure(response);
                    }
                    AnswerDecoder answers = new AnswerDecoder(ops, leases, maxValueLength, node);
                    return response.bodyToFlux(DataBuffer.class)
                            .doOnNext(buffer -> decode(answers, buffer))
                            .then(Mono.fromCallable(() -> {
                                if (!answers.complete()) {
                                    throw new ReplicaException(node, "sent an answer that does not answer every call of its batch");
                                }
                                return answers.outcomes();
                            }));
                }));
    }

    private static void decode(AnswerDecoder answers, DataBuffer buffer) {
        try (DataBuffer.ByteBufferIterator views = buffer.readableByteBuffers()) {
            views.forEachRemaining(view -> answers.decode(view, view.remaining()));
        } finally {
            DataBufferUtils.release(buffer);
        }
    }

    /** The call, failed with a TimeoutException naming this replica when it does not answer within the timeout. */
    private <T> Mono<T> inTime(Mono<T> call) {
        return timer.bound(call, timeout, name);
    }

    @Override
    public Flux<Entry> range(byte[] start, byte[] end) {
        StringBuilder target = new StringBuilder(ReplicaProtocol.RECORDS_PATH)
                .append("?start=").append(ReplicaProtocol.encodeKey(start));
        if (end != null) {
            target.append("&end=").append(ReplicaProtocol.encodeKey(end));
        }
        return client.get().uri(URI.create(node + target))
                .header(HttpHeaders.AUTHORIZATION, authentication.authorization(node, "GET", target.toString(), null, (byte[]) null))
                .exchangeToFlux(this::records)
                .timeout(timer.after(timeout), entry -> timer.after(rangeIdleTimeout));
    }

    private Flux<Entry> records(ClientResponse response) {
        if (response.statusCode().value() != HttpStatus.OK.value()) {
            return failure(response).flux().cast(Entry.class);
        }
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(maxKeyLength, maxValueLength);
        // Network buffers are decoded a couple at a time, as the merge asks for entries.
        return response.bodyToFlux(DataBuffer.class)
                .concatMapIterable(decoder::decode, 2)
                .concatWith(Mono.fromRunnable(decoder::finish));
    }

    private <T> Mono<T> failure(ClientResponse response) {
        return RefusedCall.of(node, response);
    }

    @Override
    public String toString() {
        return name;
    }
}
