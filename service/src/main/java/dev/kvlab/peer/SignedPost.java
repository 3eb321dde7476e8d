package dev.kvlab.peer;

import java.net.URI;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/** A POST to a peer with its whole body, signed for that peer with the body ({@link PeerAuthentication}). */
final class SignedPost {

    private SignedPost() {
    }

    static WebClient.RequestHeadersSpec<?> to(WebClient client, PeerAuthentication authentication, String node, String path,
                                              MediaType type, byte[] body) {
        return client.post().uri(URI.create(node + path))
                .contentType(type)
                .header(HttpHeaders.AUTHORIZATION, authentication.authorization(node, "POST", path, null, body))
                .contentLength(body.length)
                .bodyValue(body);
    }
}
