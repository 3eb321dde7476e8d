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

    private Mono<Void> notice(String peer, String path, String node) {
        byte[] body = node.getBytes(StandardCharsets.UTF_8);
        return SignedPost.to(client, authentication, peer, path, MediaType.TEXT_PLAIN, body)
                .exchangeToMono(response -> response.statusCode().value() == HttpStatus.NO_CONTENT.value()
                        ? response.releaseBody()
                        : RefusedCall.<Void>of(peer, response))
                .timeout(timeout, Mono.error(() -> new TimeoutException(peer + " did not answer a membership notice within " + timeout)));
    }
}
