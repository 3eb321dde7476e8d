package dev.kvlab.api;

import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.ReplicaCount;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/** {@code /v0/entity}: GET, PUT and DELETE of one key through the coordinator. */
final class EntityHandler {

    private final Coordinator coordinator;
    private final ValueReader values;

    EntityHandler(Coordinator coordinator, ValueReader values) {
        this.coordinator = coordinator;
        this.values = values;
    }

    Mono<ServerResponse> get(ServerRequest request) {
        QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
        byte[] key = RequestParameters.requiredKey(query, "id");
        ReplicaCount replicas = RequestParameters.replicas(query);
        return coordinator.get(key, replicas)
                .flatMap(record -> ServerResponse.ok()
                        .contentType(MediaType.APPLICATION_OCTET_STREAM)
                        .contentLength(record.valueLength())
                        // The value's bytes as they are: no codec to look up for every GET.
                        .body((response, context) -> response.writeWith(
                                Mono.just(DefaultDataBufferFactory.sharedInstance.wrap(record.value())))))
                .switchIfEmpty(Mono.defer(() -> ApiErrors.plain(HttpStatus.NOT_FOUND, "no value for this id")));
    }

    Mono<ServerResponse> put(ServerRequest request) {
        QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
        byte[] key = RequestParameters.requiredKey(query, "id");
        ReplicaCount replicas = RequestParameters.replicas(query);
        return values.read(request)
                .flatMap(value -> coordinator.put(key, value, replicas))
                .then(Mono.defer(() -> ServerResponse.status(HttpStatus.CREATED).build()));
    }

    Mono<ServerResponse> delete(ServerRequest request) {
        QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
        byte[] key = RequestParameters.requiredKey(query, "id");
        ReplicaCount replicas = RequestParameters.replicas(query);
        return coordinator.delete(key, replicas)
                .then(Mono.defer(() -> ServerResponse.status(HttpStatus.ACCEPTED).build()));
    }
}
