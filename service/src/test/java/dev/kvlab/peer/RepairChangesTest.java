package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.replication.ReplicaException;
import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.Version;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The changed keys exchange of a repair round: what goes over the wire comes back the same, a body
 * that is not one is refused with a message, and a peer of an older version, which does not know
 * the exchange (404), is told apart from a failure, so the round falls back to the scan.
 */
class RepairChangesTest {

    static final List<String> NODES = List.of("http://a:1", "http://b:2", "http://c:3");
    static final RepairRequest REQUEST = new RepairRequest(NODES, "http://a:1", "http://b:2", 8, null);

    @Test
    void requestsAndAnswersRoundTrip() {
        RepairChanges.Request request = new RepairChanges.Request(REQUEST, true, 42, List.of(bytes("k1"), new byte[0], bytes("k3")));
        RepairChanges.Request decoded = RepairChanges.Request.decode(ByteBuffer.wrap(request.encode()), 1024);
        assertThat(decoded.request().nodes()).isEqualTo(NODES);
        assertThat(decoded.recent()).isTrue();
        assertThat(decoded.generation()).isEqualTo(42);
        assertThat(decoded.keys()).extracting(key -> new String(key, StandardCharsets.UTF_8)).containsExactly("k1", "", "k3");

        RecordHeader plain = new RecordHeader(new Version(7, 1), 3, false);
        RecordHeader tombstone = new RecordHeader(new Version(8, 2), 2, true);
        RecordHeader expiring = new RecordHeader(new Version(9, 3), 3, false, 123_456);
        RepairChanges answer = new RepairChanges(new long[] {1, -2, 3, 4, 5, 6, 7, Long.MIN_VALUE}, 9,
                List.of(new RepairChanges.KeyState(bytes("a"), true, plain), new RepairChanges.KeyState(bytes("b"), true, null)),
                List.of(new RepairChanges.KeyState(bytes("c"), false, null), new RepairChanges.KeyState(bytes("d"), true, tombstone),
                        new RepairChanges.KeyState(bytes("e"), true, expiring)));
        RepairChanges back = RepairChanges.decode(ByteBuffer.wrap(answer.encode()), 8, 1024);
        assertThat(back.hashes()).isEqualTo(answer.hashes());
        assertThat(back.generation()).isEqualTo(9);
        assertThat(back.recent()).usingRecursiveFieldByFieldElementComparator().isEqualTo(answer.recent());
        assertThat(back.looked()).usingRecursiveFieldByFieldElementComparator().isEqualTo(answer.looked());
    }

    @Test
    void aBodyThatIsNotARequestIsRefusedWithAMessage() {
        byte[] body = new RepairChanges.Request(REQUEST, false, 1, List.of(bytes("key"))).encode();
        assertThatThrownBy(() -> RepairChanges.Request.decode(ByteBuffer.wrap(Arrays.copyOf(body, body.length - 1)), 1024))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cut short");
        assertThatThrownBy(() -> RepairChanges.Request.decode(ByteBuffer.wrap(Arrays.copyOf(body, body.length + 1)), 1024))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("after its end");
        assertThatThrownBy(() -> RepairChanges.Request.decode(ByteBuffer.wrap(body), 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than 2");
        byte[] huge = ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).array();
        assertThatThrownBy(() -> RepairChanges.Request.decode(ByteBuffer.wrap(huge), 1024)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPeerThatDoesNotKnowTheExchangeIsToldApartFromAFailure() {
        DisposableServer older = HttpServer.create().host("127.0.0.1").port(0)
                .route(routes -> routes.post(ReplicaProtocol.REPAIR_BUCKETS_PATH, (request, response) -> response.send()))
                .bindNow();
        DisposableServer failing = HttpServer.create().host("127.0.0.1").port(0)
                .handle((request, response) -> response.status(HttpResponseStatus.SERVICE_UNAVAILABLE).sendString(reactor.core.publisher.Mono.just("busy")))
                .bindNow();
        try {
            assertThat(client().changes(requestTo("http://127.0.0.1:" + older.port())).block(Duration.ofSeconds(10)))
                    .as("an older version: no exchange, and the round scans").isEqualTo(Optional.empty());
            assertThatThrownBy(() -> client().changes(requestTo("http://127.0.0.1:" + failing.port())).block(Duration.ofSeconds(10)))
                    .isInstanceOf(ReplicaException.class).hasMessageContaining("503");
        } finally {
            older.disposeNow();
            failing.disposeNow();
        }
    }

    private static RepairChanges.Request requestTo(String responder) {
        return new RepairChanges.Request(new RepairRequest(List.of("http://a:1", responder), "http://a:1", responder, 8, null), true, 0, List.of());
    }

    private static RepairClient client() {
        PeerAuthentication authentication = new PeerAuthentication(bytes("secret"), System::currentTimeMillis, 60_000, () -> "http://a:1");
        return new RepairClient(WebClient.create(), authentication, Duration.ofSeconds(10), 1024);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
