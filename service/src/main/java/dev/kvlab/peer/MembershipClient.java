package dev.kvlab.peer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * This node's end of the membership notices to a peer ({@link MembershipCalls}), each signed with
 * its body ({@link PeerAuthentication}) and bounded by {@code timeout}.
 */
public final class MembershipClient {

    private final WebClient client;
    private final PeerAuthentication authentication;
    private final Duration timeout;

    MembershipClient(WebClient client, PeerAuthentication authentication, Duration timeout) {
        this.client = client;
        this.authentication = authentication;
        this.timeout = timeout;
    }

    /** Tells {@code peer} that {@code node}'s leave is finished. */
    public Mono<Void> left(String peer, String node) {
        return notice(peer, MembershipCalls.LEFT_PATH, node);
    }

    /** Tells {@code peer} that {@code node} serves (again). */
    public Mono<Void> joined(String peer, String node) {
        return notice(peer, MembershipCalls.JOINED_PATH, node);
    }

    /**
     * Whether {@code peer} serves: true once it answers this node's notice that {@code node} (this
     * node) serves, whether it knows this node or not; false when it does not answer in time or
     * answers anything else.
     */
    public Mono<Boolean> answers(String peer, String node) {
        return signed(peer, MembershipCalls.JOINED_PATH, node)
                .exchangeToMono(response -> {
                    int status = response.statusCode().value();
                    return response.releaseBody().thenReturn(status == HttpStatus.NO_CONTENT.value() || status == HttpStatus.CONFLICT.value());
                })
                .timeout(timeout, Mono.just(false))
                .onErrorReturn(false);
    }

    private Mono<Void> notice(String peer, String path, String node) {
        return signed(peer, path, node)
                .exchangeToMono(response -> response.statusCode().value() == HttpStatus.NO_CONTENT.value()
                        ? response.releaseBody()
                        : RefusedCall.<Void>of(peer, response))
                .timeout(timeout, Mono.error(() -> new TimeoutException(peer + " did not answer a membership notice within " + timeout)));
    }

    /** A signed notice to {@code peer} naming {@code node}, its name the body. */
    private WebClient.RequestHeadersSpec<?> signed(String peer, String path, String node) {
        return SignedPost.to(client, authentication, peer, path, MediaType.TEXT_PLAIN, node.getBytes(StandardCharsets.UTF_8));
    }
}
