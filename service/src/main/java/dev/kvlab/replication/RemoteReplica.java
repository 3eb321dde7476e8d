package dev.kvlab.replication;

import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A replica on another node, reached over {@link ReplicaProtocol} with the shared, pooled
 * {@link WebClient}. Every call fails (never hangs) when the peer does not answer in time: a
 * single-key call within {@code timeout} (connecting included), a range's first entry within
 * {@code timeout} and each next one within {@code rangeIdleTimeout}. A call cut short by its
 * timeout closes its connection, so a dead peer's connections leave the pool as they fail.
 */
public final class RemoteReplica implements Replica {

    private final String node;
    private final WebClient client;
    private final Duration timeout;
    private final Duration rangeIdleTimeout;
    private final int maxKeyLength;
    private final long maxValueLength;

    public RemoteReplica(String node, WebClient client, Duration timeout, Duration rangeIdleTimeout,
                         int maxKeyLength, long maxValueLength) {
        this.node = node;
        this.client = client;
        this.timeout = timeout;
        this.rangeIdleTimeout = rangeIdleTimeout;
        this.maxKeyLength = maxKeyLength;
        this.maxValueLength = maxValueLength;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key) {
        return client.get().uri(recordUri(key)).exchangeToMono(this::readAnswer).timeout(deadline());
    }

    private Mono<Optional<Record>> readAnswer(ClientResponse response) {
        if (response.statusCode().value() == HttpStatus.NOT_FOUND.value()) {
            return response.releaseBody().thenReturn(Optional.empty());
        }
        if (response.statusCode().value() != HttpStatus.OK.value()) {
            return failure(response);
        }
        Version version = Version.parse(header(response, ReplicaProtocol.VERSION_HEADER));
        boolean tombstone = Boolean.parseBoolean(header(response, ReplicaProtocol.TOMBSTONE_HEADER));
        if (tombstone) {
            return response.releaseBody().thenReturn(Optional.of(Record.tombstone(version)));
        }
        return DataBufferUtils.join(response.bodyToFlux(DataBuffer.class))
                .map(body -> Record.value(version, ValueArrays.copyOf(body)))
                .defaultIfEmpty(Record.value(version, Record.newValueArray(0)))
                .map(Optional::of);
    }

    @Override
    public Mono<Void> write(byte[] key, Record record) {
        WebClient.RequestHeadersSpec<?> call = record.isTombstone()
                ? client.delete().uri(recordUri(key)).header(ReplicaProtocol.VERSION_HEADER, record.version().toString())
                : client.put().uri(recordUri(key))
                        .header(ReplicaProtocol.VERSION_HEADER, record.version().toString())
                        .bodyValue(DefaultDataBufferFactory.sharedInstance.wrap(record.value()));
        HttpStatus expected = record.isTombstone() ? HttpStatus.ACCEPTED : HttpStatus.CREATED;
        return call.exchangeToMono(response -> response.statusCode().value() == expected.value()
                        ? response.releaseBody()
                        : failure(response))
                .timeout(deadline());
    }

    /**
     * The timeout as a publisher, not a Duration: for a Duration, Reactor names the operator
     * chain for the timeout's message on every subscription (a regex per replica call).
     */
    private Mono<Long> deadline() {
        return Mono.delay(timeout);
    }

    @Override
    public Flux<Entry> range(byte[] start, byte[] end) {
        StringBuilder uri = new StringBuilder(node).append(ReplicaProtocol.RECORDS_PATH)
                .append("?start=").append(ReplicaProtocol.encodeKey(start));
        if (end != null) {
            uri.append("&end=").append(ReplicaProtocol.encodeKey(end));
        }
        return client.get().uri(URI.create(uri.toString()))
                .exchangeToFlux(this::records)
                .timeout(deadline(), entry -> Mono.delay(rangeIdleTimeout));
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

    private URI recordUri(byte[] key) {
        return URI.create(node + ReplicaProtocol.RECORD_PATH + "?id=" + ReplicaProtocol.encodeKey(key));
    }

    private static String header(ClientResponse response, String name) {
        String value = response.headers().asHttpHeaders().getFirst(name);
        if (value == null) {
            throw new IllegalStateException("the replica's answer lacks the " + name + " header");
        }
        return value;
    }

    private <T> Mono<T> failure(ClientResponse response) {
        return response.releaseBody().then(Mono.error(new ReplicaException(node, "answered " + response.statusCode().value())));
    }

    @Override
    public String toString() {
        return "replica " + node;
    }
}
