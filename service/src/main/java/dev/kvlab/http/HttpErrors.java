package dev.kvlab.http;

import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.replication.ClockBehindException;
import dev.kvlab.replication.NotEnoughReplicasException;
import dev.kvlab.replication.UnsatisfiableReplicasException;
import dev.kvlab.replication.VersionTooFarAheadException;
import dev.kvlab.storage.StorageFullException;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The one place where failures become status codes, for the client API and the replica protocol
 * alike, each answer a one-line plain-text body that says why.
 */
public final class HttpErrors {

    private static final Logger log = LoggerFactory.getLogger(HttpErrors.class);

    private HttpErrors() {
    }

    /**
     * {@code handler}, with a failure turned into its status ({@link #send}) while no part of the
     * answer has been sent. A client that went away gets nothing: there is no one to answer.
     */
    public static BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> answered(
            BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> handler) {
        return (request, response) -> Mono.defer(() -> handler.apply(request, response))
                .onErrorResume(error -> !response.hasSentHeaders() && !isClientGone(error), error -> send(request, response, error));
    }

    /** The client went away mid-request (closed or reset its connection): not a failure of ours. */
    public static boolean isClientGone(Throwable error) {
        return error instanceof AbortedException || AbortedException.isConnectionReset(error);
    }

    /** Answers a request that failed with {@code error}, before anything of the answer was sent. */
    public static Mono<Void> send(HttpServerRequest request, HttpServerResponse response, Throwable error) {
        return switch (error) {
            case BadRequestException e -> NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            case UnsatisfiableReplicasException e -> NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            case VersionTooFarAheadException e -> NettyResponses.plain(response, HttpResponseStatus.BAD_REQUEST, e.getMessage());
            // The connection closes: the client may still be sending the refused body (ValueReader).
            case PayloadTooLargeException e -> NettyResponses.closing(response, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, e.getMessage());
            case NotEnoughReplicasException e -> NettyResponses.plain(response, switch (e.shortfall()) {
                case DISK_FULL -> HttpResponseStatus.INSUFFICIENT_STORAGE;
                case OVERLOADED -> HttpResponseStatus.SERVICE_UNAVAILABLE;
                case UNANSWERED -> HttpResponseStatus.GATEWAY_TIMEOUT;
            }, e.getMessage());
            case RejectedExecutionException e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, "the node is overloaded, retry later");
            case OverBudgetException e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, e.getMessage());
            case TooManyStreamsException e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, e.getMessage());
            case ConflictException e -> NettyResponses.plain(response, HttpResponseStatus.CONFLICT, e.getMessage());
            case PreconditionFailedException e -> NettyResponses.plain(response, HttpResponseStatus.PRECONDITION_FAILED, e.getMessage());
            case ClockBehindException e -> NettyResponses.plain(response, HttpResponseStatus.SERVICE_UNAVAILABLE, e.getMessage());
            case StorageFullException e -> NettyResponses.plain(response, HttpResponseStatus.INSUFFICIENT_STORAGE, e.getMessage());
            default -> {
                log.error("{} {} failed", request.method(), request.fullPath(), error);
                yield NettyResponses.plain(response, HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error: " + error);
            }
        };
    }
}
