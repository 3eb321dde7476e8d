package dev.kvlab.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.peer.PeerAuthentication;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.RawHttp;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each port keeps at most its own number of connections open: one more is answered 503 with a
 * message and closed, and clients who fill one port leave the others to their users.
 */
class ConnectionLimitTest {

    static final int CLIENT_CAP = 12;
    static final int REPLICA_CAP = 8;
    static final int MANAGEMENT_CAP = 4;
    static final int EXTRA = 5;

    static InProcessCluster cluster;
    static PeerAuthentication peer;

    @BeforeAll
    static void startNode() throws Exception {
        cluster = InProcessCluster.startWithReplicaPorts(1, Map.of(
                "kvlab.netty.max-connections.client", Integer.toString(CLIENT_CAP),
                "kvlab.netty.max-connections.replica", Integer.toString(REPLICA_CAP),
                "kvlab.netty.max-connections.management", Integer.toString(MANAGEMENT_CAP),
                "kvlab.replication.timeout", "500ms"));
        peer = new PeerAuthentication(cluster.secret().getBytes(StandardCharsets.UTF_8), System::currentTimeMillis, 60_000, () -> "a-test-peer");
    }

    @AfterAll
    static void stopNode() {
        cluster.close();
    }

    @Test
    void connectionsBeyondEachPortsLimitGet503AndTheOtherPortsStillServe() throws Exception {
        String client = cluster.url(0);
        String replica = cluster.replicaUrl(0);
        String management = cluster.management(0).baseUrl();
        List<Socket> held = new ArrayList<>();
        try {
            // The client port full: its extra connections are answered 503 and closed...
            held.addAll(fill(client, CLIENT_CAP, ConnectionLimitTest::status));
            for (int i = 0; i < EXTRA; i++) {
                assertRefused(client, status(), "client port", "kvlab.netty.max-connections.client");
            }
            // ...while the replica and management ports serve.
            assertThat(answer(replica, signedRecordRead()).status()).isEqualTo(404);
            assertThat(answer(management, health()).status()).isEqualTo(200);

            held.addAll(fill(replica, REPLICA_CAP, ConnectionLimitTest::signedRecordRead));
            for (int i = 0; i < EXTRA; i++) {
                assertRefused(replica, signedRecordRead(), "replica port", "kvlab.netty.max-connections.replica");
            }
            held.addAll(fill(management, MANAGEMENT_CAP, ConnectionLimitTest::health));
            for (int i = 0; i < EXTRA; i++) {
                assertRefused(management, health(), "management port", "kvlab.netty.max-connections.management");
            }

            // A connection that closes makes room for the next one.
            held.removeFirst().close();
            await().atMost(Duration.ofSeconds(5)).until(() -> answer(client, status()).status() == 200);
        } finally {
            for (Socket socket : held) {
                socket.close();
            }
        }
    }

    /** {@code count} keep-alive connections to {@code url}, each with one request answered. */
    private static List<Socket> fill(String url, int count, java.util.function.Supplier<String> request) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Socket socket = open(url);
            sockets.add(socket);
            socket.getOutputStream().write(request.get().getBytes(StandardCharsets.ISO_8859_1));
            assertThat(RawHttp.readResponse(socket.getInputStream()).status()).as("connection %d of %d to %s", i + 1, count, url)
                    .isLessThan(500);
        }
        return sockets;
    }

    private static void assertRefused(String url, String request, String port, String property) throws IOException {
        try (Socket socket = open(url)) {
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            RawHttp.Response refused = RawHttp.readResponse(socket.getInputStream());
            assertThat(refused.status()).as("a connection beyond the limit of the %s", port).isEqualTo(503);
            assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains(port, property, "retry later");
            assertThat(refused.headers()).containsEntry("connection", "close");
            assertThat(socket.getInputStream().read()).as("closed after its 503").isEqualTo(-1);
        }
    }

    /** One request on a connection of its own, which closes with the answer. */
    private static RawHttp.Response answer(String url, String request) throws IOException {
        try (Socket socket = open(url)) {
            socket.getOutputStream().write(request.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            return RawHttp.readResponse(socket.getInputStream());
        }
    }

    private static String status() {
        return "GET /v0/status HTTP/1.1\r\nHost: localhost\r\n\r\n";
    }

    private static String health() {
        return "GET /actuator/health/liveness HTTP/1.1\r\nHost: localhost\r\n\r\n";
    }

    private static String signedRecordRead() {
        String target = "/internal/v1/record?id=absent";
        return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: " + peer.authorization(cluster.replicaUrl(0), "GET", target, null, new byte[0]) + "\r\n\r\n";
    }

    private static Socket open(String url) throws IOException {
        URI uri = URI.create(url);
        Socket socket = new Socket(uri.getHost(), uri.getPort());
        socket.setSoTimeout(10_000);
        return socket;
    }
}
