package dev.kvlab.peer;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.HttpErrors;
import dev.kvlab.http.NettyResponses;
import dev.kvlab.memory.MemoryBudget;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.ByteBuffer;
import java.util.function.BiFunction;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The replica protocol's guard, shared by every handler of its routes: a call is taken only when
 * it is signed with the cluster's secret ({@link PeerAuthentication}), and its body only once it
 * is read on the node's budget and found to be the body signed.
 */
final class SignedRoutes {

    private final PeerAuthentication authentication;
    private final MemoryBudget budget;

    SignedRoutes(PeerAuthentication authentication, MemoryBudget budget) {
        this.authentication = authentication;
        this.budget = budget;
    }

    /** A route of the protocol, given the call once its head is found authentic. */
    @FunctionalInterface
    interface SignedRoute {
        Mono<Void> handle(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call);
    }

    /**
     * {@code route} for calls signed with the cluster's secret, for this node, not seen before
     * ({@link PeerAuthentication}); any other call gets 401 before a byte of its body is read, and
     * the connection closes. A body or frame that is not the one signed gets 401 before it is used
     * (or, on a stream that has answered already, ends it).
     */
    BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> peersOnly(boolean streamed, SignedRoute route) {
        return HttpErrors.answered((request, response) -> Mono.defer(() -> {
            HttpHeaders headers = request.requestHeaders();
            PeerAuthentication.Call call = authentication.verify(request.method().name(), request.uri(),
                    headers.get(ReplicaProtocol.VERSION_HEADER), headers.get(HttpHeaderNames.AUTHORIZATION), streamed);
            return route.handle(request, response, call);
        }).onErrorResume(PeerAuthentication.Refused.class, refused -> response.hasSentHeaders() ? Mono.error(refused) : refusal(response, refused)));
    }

    private static Mono<Void> refusal(HttpServerResponse response, PeerAuthentication.Refused refused) {
        if (refused.status() == HttpResponseStatus.UNAUTHORIZED.code()) {
            response.header(HttpHeaderNames.WWW_AUTHENTICATE, PeerAuthentication.SCHEME);
        }
        return NettyResponses.closing(response, HttpResponseStatus.valueOf(refused.status()), refused.getMessage());
    }

    /** A route whose calls have no body: their signature must say so. */
    static SignedRoute withoutBody(BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> handler) {
        return (request, response, call) -> {
            call.checkNoBody();
            return handler.apply(request, response);
        };
    }

    /**
     * The call's body, read whole into an array held on the node's budget (its Content-Length
     * reserved before a byte is read: 411 without one, 413 over {@code maxBytes}, 503 after the
     * body is dropped when the budget has no room), checked against the digest its signature covers, then handed to
     * {@code use} with the lease that holds it; the lease goes back when {@code use} is done, or
     * the call fails or is cancelled.
     */
    Mono<Void> body(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call, long maxBytes,
                                  String what, BiFunction<ByteBuffer, MemoryBudget.Lease, Mono<Void>> use) {
        long length = request.requestHeaders().getInt(HttpHeaderNames.CONTENT_LENGTH, -1);
        if (length < 0) {
            return NettyResponses.closing(response, HttpResponseStatus.LENGTH_REQUIRED, what + " needs a Content-Length");
        }
        if (length > maxBytes) {
            return NettyResponses.closing(response, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    what + " is at most " + maxBytes + " bytes, this one is " + length);
        }
        return Mono.usingWhen(Mono.fromSupplier(budget::lease), lease -> {
            if (!lease.tryHold(length)) {
                return NettyResponses.afterDroppingBody(request, response, HttpResponseStatus.SERVICE_UNAVAILABLE, lease.overBudget().getMessage());
            }
            byte[] body = new byte[(int) length];
            int[] filled = {0};
            return request.receive()
                    .doOnNext(buffer -> {
                        int readable = buffer.readableBytes();
                        if (readable > body.length - filled[0]) {
                            throw new BadRequestException(what + " is longer than its Content-Length");
                        }
                        buffer.getBytes(buffer.readerIndex(), body, filled[0], readable);
                        filled[0] += readable;
                    })
                    .then(Mono.defer(() -> {
                        if (filled[0] != body.length) {
                            throw new BadRequestException(what + " is cut short");
                        }
                        call.checkBody(body, 0, body.length);
                        return use.apply(ByteBuffer.wrap(body), lease);
                    }));
        }, lease -> Mono.fromRunnable(lease::release));
    }
}
