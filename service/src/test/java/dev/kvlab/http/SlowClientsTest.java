package dev.kvlab.http;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.PeerAuthentication;
import dev.kvlab.peer.ReplicaProtocol;
import dev.kvlab.storage.Record;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Clients that declare a large body and stall, or trickle their headers, hold neither the node's
 * memory budget nor its ports: small requests of other clients are still answered at once, on the
 * client port and on the replica port, and the stalled ones get 408 and give their budget back.
 */
class SlowClientsTest {

    static final int MIB = 1024 * 1024;
    static final long BUDGET = 4L * MIB;
    /** More stalled uploads of 1 MiB than the budget holds, on each port. */
    static final int STALLED = (int) (BUDGET / MIB) + 50;
    static final Duration BODY_TIMEOUT = Duration.ofSeconds(2);

    static InProcessCluster cluster;

    @BeforeAll
    static void startNode() throws Exception {
        cluster = InProcessCluster.startWithReplicaPorts(1, Map.of(
                "kvlab.memory.max-bytes-in-flight", BUDGET + "B",
                "kvlab.netty.body-timeout", BODY_TIMEOUT.toMillis() + "ms",
                "server.netty.idle-timeout", "1s",
                "kvlab.replication.timeout", "500ms"));
    }

    @AfterAll
    static void stopNode() {
        cluster.close();
    }

    @Test
    void stalledUploadsHoldNoMoreThanTheySentGet408AndLeaveRoomForOtherClientsOnEveryPort() throws Exception {
        MemoryBudget budget = cluster.bean(0, MemoryBudget.class);
        PeerAuthentication peer = new PeerAuthentication(cluster.secret().getBytes(StandardCharsets.UTF_8), System::currentTimeMillis, 60_000,
                () -> "a-test-peer");
        // The mebibyte each upload declares, and signs, but never sends.
        String declaredBody = PeerAuthentication.digest(new byte[MIB]);
        List<Socket> stalled = new ArrayList<>();
        try {
            long sent = System.nanoTime();
            for (int i = 0; i < STALLED; i++) {
                stalled.add(stalledUpload(cluster.url(0), KvClient.entity("stalled-" + i, null)));
                String target = "/internal/v1/record?id=stalled-replica-" + i;
                stalled.add(stalledUpload(cluster.replicaUrl(0), target, ReplicaProtocol.VERSION_HEADER + ": 1.1",
                        "Authorization: " + peer.authorization(cluster.replicaUrl(0), "PUT", target, "1.1", declaredBody)));
            }
            long sentBytes = 2L * STALLED * (Record.HEADER_BYTES + 1);
            await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() >= sentBytes);

            KvClient client = cluster.client(0);
            assertThat(answeredWithinASecond(() -> client.put("small", "v")).statusCode()).isEqualTo(201);
            assertThat(text(answeredWithinASecond(() -> client.get("small")))).isEqualTo("v");
            KvClient peerClient = KvClient.signing(cluster.replicaUrl(0), cluster.secret());
            assertThat(answeredWithinASecond(() -> peerClient.send("PUT", "/internal/v1/record?id=small-replica", BodyPublishers.ofString("r"),
                    ReplicaProtocol.VERSION_HEADER, "1.1")).statusCode()).isEqualTo(201);
            assertThat(text(answeredWithinASecond(() -> peerClient.internalRecord("small-replica")))).isEqualTo("r");
            // Each holds the byte it sent and the record's header, not the mebibyte it declared.
            await().atMost(Duration.ofSeconds(5)).until(() -> budget.held() == sentBytes);

            for (Socket socket : stalled) {
                RawHttp.Response answer = RawHttp.readResponse(socket.getInputStream());
                assertThat(answer.status()).as("a stalled upload's answer").isEqualTo(408);
                assertThat(new String(answer.body(), StandardCharsets.UTF_8))
                        .contains("did not arrive in time: 1 byte of " + MIB, "kvlab.netty.body-timeout", "kvlab.netty.body-min-rate");
                assertThat(socket.getInputStream().read()).as("the connection is closed after the 408").isEqualTo(-1);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("408s once the body timeout has passed")
                    .isGreaterThanOrEqualTo(BODY_TIMEOUT).isLessThan(BODY_TIMEOUT.multipliedBy(5));
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> budget.held() == 0);
        assertThat(text(cluster.management(0).send("GET", "/actuator/prometheus", BodyPublishers.noBody())))
                .contains("kvlab_memory_held_bytes{application=\"kvlab\"} 0.0");
        assertThat(cluster.client(0).get("stalled-0").statusCode()).as("a stalled upload stores nothing").isEqualTo(404);
        assertThat(cluster.holders("stalled-replica-0")).isEmpty();
    }

    @Test
    void aBodyTrickledAByteAtATimeGets408OnceItFallsBelowTheMinimumRate() throws Exception {
        MemoryBudget budget = cluster.bean(0, MemoryBudget.class);
        try (Socket trickle = stalledUpload(cluster.url(0), KvClient.entity("trickled", null))) {
            OutputStream out = trickle.getOutputStream();
            long started = System.nanoTime();
            RawHttp.Response answer = null;
            // A byte every 200 ms keeps the body in progress, far below 64 KiB a second.
            while (answer == null) {
                Thread.sleep(200);
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BODY_TIMEOUT.multipliedBy(5));
                if (trickle.getInputStream().available() > 0) {
                    answer = RawHttp.readResponse(trickle.getInputStream());
                    continue;
                }
                try {
                    out.write('x');
                    out.flush();
                } catch (IOException closed) {
                    answer = RawHttp.readResponse(trickle.getInputStream());
                }
            }
            assertThat(answer.status()).isEqualTo(408);
            assertThat(new String(answer.body(), StandardCharsets.UTF_8)).contains("did not arrive in time", "kvlab.netty.body-min-rate");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(BODY_TIMEOUT);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> budget.held() == 0);
    }

    @Test
    void headersTrickledAByteAtATimeAreCutOffByTheIdleTimeoutOnEveryPort() throws Exception {
        for (String url : List.of(cluster.url(0), cluster.replicaUrl(0), cluster.management(0).baseUrl())) {
            try (Socket slowloris = open(url)) {
                OutputStream out = slowloris.getOutputStream();
                byte[] request = "GET /v0/status HTTP/1.1\r\nHost: localhost\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII);
                long started = System.nanoTime();
                boolean closed = false;
                // A byte every 200 ms: the headers would take 16 s to arrive, the idle timeout is 1 s.
                for (int i = 0; i < request.length - 4 && !closed; i++) {
                    Thread.sleep(200);
                    try {
                        out.write(request[i]);
                        out.flush();
                        closed = slowloris.getInputStream().available() == 0 && closedByPeer(slowloris);
                    } catch (IOException e) {
                        closed = true;
                    }
                }
                assertThat(closed).as("%s closes a connection whose headers trickle in", url).isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            }
        }
    }

    @Test
    void aStalledBodyOnTheManagementPortGets408Too() throws Exception {
        long started = System.nanoTime();
        // An admin call whose JSON body never arrives: the actuator reads bodies before it acts.
        try (Socket stalled = stalledRequest("POST", cluster.management(0).baseUrl(), "/actuator/kvlab/leave",
                "Content-Type: application/json")) {
            RawHttp.Response answer = RawHttp.readResponse(stalled.getInputStream());
            // 401 if the management port asks for a credential first: then the body is never read.
            assertThat(answer.status()).isIn(408, 401);
            if (answer.status() == 408) {
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(BODY_TIMEOUT);
            }
            assertThat(stalled.getInputStream().read()).as("the connection is closed").isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BODY_TIMEOUT.multipliedBy(3));
        }
        assertThat(text(cluster.management(0).send("GET", "/actuator/health/liveness", BodyPublishers.noBody()))).contains("UP");
    }

    /** Sends the headers of a PUT that declares 1 MiB, and one byte of its body. */
    private static Socket stalledUpload(String url, String target, String... headers) throws IOException {
        return stalledRequest("PUT", url, target, headers);
    }

    /** Sends the headers of a request that declares a body of 1 MiB, and one byte of it. */
    private static Socket stalledRequest(String method, String url, String target, String... headers) throws IOException {
        Socket socket = open(url);
        StringBuilder request = new StringBuilder(method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + MIB + "\r\n");
        for (String header : headers) {
            request.append(header).append("\r\n");
        }
        OutputStream out = socket.getOutputStream();
        out.write(request.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        out.write('{');
        out.flush();
        return socket;
    }

    private static Socket open(String url) throws IOException {
        URI uri = URI.create(url);
        Socket socket = new Socket(uri.getHost(), uri.getPort());
        socket.setSoTimeout(15_000);
        return socket;
    }

    /** Whether the node has closed the connection: a read sees its end at once. */
    private static boolean closedByPeer(Socket socket) throws IOException {
        int timeout = socket.getSoTimeout();
        socket.setSoTimeout(1);
        try {
            InputStream in = socket.getInputStream();
            return in.read() < 0;
        } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
        } finally {
            socket.setSoTimeout(timeout);
        }
    }

    private static HttpResponse<byte[]> answeredWithinASecond(Supplier<HttpResponse<byte[]>> call) {
        long started = System.nanoTime();
        HttpResponse<byte[]> response = call.get();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("%s answered", response.request().uri()).isLessThan(Duration.ofSeconds(1));
        return response;
    }
}
