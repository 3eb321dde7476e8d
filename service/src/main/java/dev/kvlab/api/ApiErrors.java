package dev.kvlab.api;

import dev.kvlab.replication.NotEnoughReplicasException;
import dev.kvlab.replication.UnsatisfiableReplicasException;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/** Turns failures into the API's status codes, each with a one-line plain-text body that says why. */
final class ApiErrors {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    private ApiErrors() {
    }

    /** Answers a request that failed with {@code error}, before anything of the answer was sent. */
    static Mono<Void> send(HttpServerRequest request, HttpServerResponse response, Throwable error) {
        return switch (error) {
            case BadRequestException e -> NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            case UnsatisfiableReplicasException e -> NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            // The connection closes: the client may still be sending the refused body (ValueReader).
            case PayloadTooLargeException e -> NettyResponses.closing(response, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, e.getMessage());
            case NotEnoughReplicasException e -> NettyResponses.plain(response, HttpResponseStatus.GATEWAY_TIMEOUT, e.getMessage());
            case RejectedExecutionException e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, "the node is overloaded, retry later");
            case BodiesOverBudgetException e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, e.getMessage());
            default -> {
                log.error("{} {} failed", request.method(), request.fullPath(), error);
                yield NettyResponses.plain(response, HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error: " + error);
            }
        };
    }

    /** The WebFlux route that answers the methods a path does not serve. */
    static HandlerFunction<ServerResponse> methodNotAllowed(String allowed) {
        return request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                .header("Allow", allowed)
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue(request.method() + " is not allowed on " + request.path() + "; use " + allowed + "\n");
    }
}
