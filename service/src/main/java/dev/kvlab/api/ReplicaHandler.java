package dev.kvlab.api;

import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.ReplicaProtocol;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The replica side of {@link ReplicaProtocol}: this node's own store, read and written with the
 * coordinator's versions. Never fans out: these requests come from coordinators.
 */
final class ReplicaHandler {

    private final LocalStore store;
    private final HybridLogicalClock clock;
    private final ValueReader values;

    ReplicaHandler(LocalStore store, HybridLogicalClock clock, ValueReader values) {
        this.store = store;
        this.clock = clock;
        this.values = values;
    }

    Mono<ServerResponse> read(ServerRequest request) {
        byte[] key = key(request);
        return store.get(key)
                .flatMap(record -> ServerResponse.ok()
                        .header(ReplicaProtocol.VERSION_HEADER, record.version().toString())
                        .header(ReplicaProtocol.TOMBSTONE_HEADER, Boolean.toString(record.isTombstone()))
                        .contentType(MediaType.APPLICATION_OCTET_STREAM)
                        .bodyValue(DefaultDataBufferFactory.sharedInstance.wrap(record.value())))
                .switchIfEmpty(Mono.defer(() -> ApiErrors.plain(HttpStatus.NOT_FOUND, "this replica has no record of the key")));
    }

    Mono<ServerResponse> write(ServerRequest request) {
        byte[] key = key(request);
        Version version = version(request);
        return values.read(request)
                .flatMap(value -> store.write(key, Record.value(version, value)))
                .then(Mono.defer(() -> ServerResponse.status(HttpStatus.CREATED).build()));
    }

    Mono<ServerResponse> delete(ServerRequest request) {
        byte[] key = key(request);
        Version version = version(request);
        return store.write(key, Record.tombstone(version))
                .then(Mono.defer(() -> ServerResponse.status(HttpStatus.ACCEPTED).build()));
    }

    private static byte[] key(ServerRequest request) {
        return RequestParameters.requiredKey(QueryParameters.parse(request.uri().getRawQuery()), "id");
    }

    /** The coordinator's version; also moves this node's clock past it. */
    private Version version(ServerRequest request) {
        String header = request.headers().firstHeader(ReplicaProtocol.VERSION_HEADER);
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
