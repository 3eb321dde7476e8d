package dev.kvlab.peer;

import dev.kvlab.cluster.ServingNodes;
import dev.kvlab.http.NettyResponses;
import dev.kvlab.memory.MemoryBudget;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * This node's end of the membership notices ({@link MembershipCalls}), served beside the replica
 * calls under the same guard ({@link SignedRoutes}): a peer that has left is taken out of this
 * node's topology at once, one that serves (a new node, or one that has left and started again) into it
 * ({@link ServingNodes}).
 */
final class MembershipHandler {

    private final SignedRoutes signed;
    private final ServingNodes serving;

    MembershipHandler(PeerAuthentication authentication, MemoryBudget budget, ServingNodes serving) {
        this.signed = new SignedRoutes(authentication, budget);
        this.serving = serving;
    }

    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes
                .post(MembershipCalls.LEFT_PATH, notice("a notice that a node has left", serving::left))
                .post(MembershipCalls.JOINED_PATH, notice("a notice that a node has joined", serving::serves));
    }

    /** A signed notice naming a node, applied to it: 204, or 409 when {@code apply} does not know the node. */
    private BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> notice(String what, Predicate<String> apply) {
        return signed.peersOnly(false, (request, response, call) -> signed.body(request, response, call, MembershipCalls.MAX_BODY_BYTES, what,
                (body, lease) -> {
                    String node = StandardCharsets.UTF_8.decode(body).toString();
                    return apply.test(node)
                            ? NettyResponses.empty(response, HttpResponseStatus.NO_CONTENT)
                            : NettyResponses.plain(response, HttpResponseStatus.CONFLICT, "no node " + node + " in this node's topology but itself");
                }));
    }
}
