package dev.kvlab.peer;

import dev.kvlab.replication.ReplicaException;
import dev.kvlab.storage.RecordHeader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The initiator's end of a repair round ({@link ReplicaProtocol#REPAIR_BUCKETS_PATH} and the
 * rest), each call signed with its body ({@link PeerAuthentication}). The peer scans its store at a paced rate before it
 * answers, so the calls wait longer than a replica call: up to {@code scanTimeout} for the bucket
 * hashes or a stream's next digest.
 */
public final class RepairClient {

    private final WebClient client;
    private final PeerAuthentication authentication;
    private final Duration scanTimeout;
    private final int maxKeyLength;

    public RepairClient(WebClient client, PeerAuthentication authentication, Duration scanTimeout, int maxKeyLength) {
        this.client = client;
        this.authentication = authentication;
        this.scanTimeout = scanTimeout;
        this.maxKeyLength = maxKeyLength;
    }

    /** The peer's bucket hashes of the records it shares with the initiator; 409 when it reckons by another topology. */
    public Mono<long[]> buckets(RepairRequest request) {
        return post(request.responder(), ReplicaProtocol.REPAIR_BUCKETS_PATH, request.encode())
                .exchangeToMono(response -> {
                    if (response.statusCode().value() != HttpStatus.OK.value()) {
                        return RefusedCall.<long[]>of(request.responder(), response);
                    }
                    int expected = request.buckets() * Long.BYTES;
                    return DataBufferUtils.join(response.bodyToFlux(DataBuffer.class), expected)
                            .map(body -> {
                                try {
                                    if (body.readableByteCount() != expected) {
                                        throw new ReplicaException(request.responder(), "answered " + body.readableByteCount()
                                                + " bytes of bucket hashes, not " + expected);
                                    }
                                    long[] hashes = new long[request.buckets()];
                                    body.toByteBuffer().asLongBuffer().get(hashes);
                                    return hashes;
                                } finally {
                                    DataBufferUtils.release(body);
                                }
                            });
                })
                .timeout(scanTimeout, Mono.error(() -> timedOut(request.responder(), "bucket hashes")));
    }

    /** What a changed keys answer may take: the responder bounds its recent changes to a few MiB. */
    static final int MAX_CHANGES_BYTES = 64 << 20;

    /**
     * The peer's bucket hashes with the keys it changed recently and the headers asked for
     * ({@link RepairChanges}); empty when the peer does not know the exchange (an older version: 404).
     */
    public Mono<Optional<RepairChanges>> changes(RepairChanges.Request request) {
        String node = request.request().responder();
        return post(node, ReplicaProtocol.REPAIR_CHANGES_PATH, request.encode())
                .exchangeToMono(response -> {
                    if (response.statusCode().value() == HttpStatus.NOT_FOUND.value()) {
                        return response.releaseBody().thenReturn(Optional.<RepairChanges>empty());
                    }
                    if (response.statusCode().value() != HttpStatus.OK.value()) {
                        return RefusedCall.<Optional<RepairChanges>>of(node, response);
                    }
                    return DataBufferUtils.join(response.bodyToFlux(DataBuffer.class), MAX_CHANGES_BYTES)
                            .map(body -> {
                                try {
                                    return Optional.of(RepairChanges.decode(body.toByteBuffer(), request.request().buckets(), maxKeyLength));
                                } catch (IllegalArgumentException e) {
                                    throw new ReplicaException(node, "answered changed keys that are not: " + e.getMessage());
                                } finally {
                                    DataBufferUtils.release(body);
                                }
                            });
                })
                .timeout(scanTimeout, Mono.error(() -> timedOut(node, "changed keys")));
    }

    /** The keys and headers of the peer's shared records in the request's differing buckets, in key order. */
    public Flux<RecordHeader.Keyed> digests(RepairRequest request) {
        return post(request.responder(), ReplicaProtocol.REPAIR_DIGESTS_PATH, request.encode())
                .exchangeToFlux(response -> digests(request.responder(), response))
                .timeout(scanTimeout, Flux.error(() -> timedOut(request.responder(), "digests")));
    }

    private Flux<RecordHeader.Keyed> digests(String node, ClientResponse response) {
        if (response.statusCode().value() != HttpStatus.OK.value()) {
            return RefusedCall.<RecordHeader.Keyed>of(node, response).flux();
        }
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(maxKeyLength, 0);
        return response.bodyToFlux(DataBuffer.class)
                .concatMapIterable(decoder::decode, 2)
                .concatWith(Mono.fromRunnable(decoder::finish))
                .map(entry -> new RecordHeader.Keyed(entry.key(), RecordHeader.of(entry.record().encoded())));
    }

    /** Tells the peer that the initiator's round with it, begun at {@code startedMillis}, is complete. */
    public Mono<Void> done(String node, String initiator, long startedMillis) {
        byte[] name = initiator.getBytes(StandardCharsets.UTF_8);
        byte[] body = ByteBuffer.allocate(2 + name.length + 8).putShort((short) name.length).put(name).putLong(startedMillis).array();
        return post(node, ReplicaProtocol.REPAIR_DONE_PATH, body)
                .exchangeToMono(response -> response.statusCode().value() == HttpStatus.NO_CONTENT.value()
                        ? response.releaseBody()
                        : RefusedCall.<Void>of(node, response))
                .timeout(scanTimeout, Mono.error(() -> timedOut(node, "the end of the round")));
    }

    private WebClient.RequestHeadersSpec<?> post(String node, String path, byte[] body) {
        return SignedPost.to(client, authentication, node, path, MediaType.APPLICATION_OCTET_STREAM, body);
    }

    private TimeoutException timedOut(String node, String what) {
        return new TimeoutException(node + " sent no " + what + " of a repair round within " + scanTimeout);
    }
}
