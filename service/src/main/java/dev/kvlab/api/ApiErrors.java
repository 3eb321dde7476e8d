package dev.kvlab.api;

import dev.kvlab.replication.NotEnoughReplicasException;
import dev.kvlab.replication.UnsatisfiableReplicasException;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/** Turns failures into the API's status codes, each with a one-line plain-text body that says why. */
final class ApiErrors {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    private ApiErrors() {
    }

    /** A filter for every API route: handlers may throw or signal errors, clients get a status. */
    static Mono<ServerResponse> handle(ServerRequest request, HandlerFunction<ServerResponse> next) {
        return Mono.defer(() -> next.handle(request)).onErrorResume(error -> toResponse(request, error));
    }

    private static Mono<ServerResponse> toResponse(ServerRequest request, Throwable error) {
        return switch (error) {
            case BadRequestException e -> plain(HttpStatus.BAD_REQUEST, e.getMessage());
            case UnsatisfiableReplicasException e -> plain(HttpStatus.BAD_REQUEST, e.getMessage());
            case PayloadTooLargeException e -> closing(HttpStatus.PAYLOAD_TOO_LARGE, e.getMessage());
            case NotEnoughReplicasException e -> plain(HttpStatus.GATEWAY_TIMEOUT, e.getMessage());
            case RejectedExecutionException e -> plain(HttpStatus.SERVICE_UNAVAILABLE, "the node is overloaded, retry later");
            default -> {
                log.error("{} {} failed", request.method(), request.path(), error);
                yield plain(HttpStatus.INTERNAL_SERVER_ERROR, "internal error: " + error);
            }
        };
    }

    static Mono<ServerResponse> plain(HttpStatus status, String message) {
        return ServerResponse.status(status).contentType(MediaType.TEXT_PLAIN).bodyValue(message + "\n");
    }

    /** An error after which the connection closes: the rest of the request body is never read. */
    private static Mono<ServerResponse> closing(HttpStatus status, String message) {
        return ServerResponse.status(status)
                .header(HttpHeaders.CONNECTION, "close")
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue(message + "\n");
    }

    static HandlerFunction<ServerResponse> methodNotAllowed(String allowed) {
        return request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                .header("Allow", allowed)
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue(request.method() + " is not allowed on " + request.path() + "; use " + allowed + "\n");
    }
}
