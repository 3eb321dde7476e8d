package dev.kvlab.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Connections that send nothing, or stop halfway through a request line, do not stay open: on either port. */
class IdleConnectionsTest {

    static final int SOCKETS_PER_PORT = 100;

    @Test
    void connectionsThatStayIdleAreClosedAfterTheIdleTimeoutOnTheClientAndTheReplicaPort() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.startWithReplicaPorts(2,
                Map.of("server.netty.idle-timeout", "1s", "kvlab.replication.timeout", "500ms"))) {
            List<Socket> sockets = new ArrayList<>();
            try {
                for (String url : List.of(cluster.url(0), cluster.replicaUrl(0))) {
                    for (int i = 0; i < SOCKETS_PER_PORT; i++) {
                        sockets.add(open(url));
                    }
                    Socket halfway = open(url);
                    halfway.getOutputStream().write("GET /v0/status HTT".getBytes(StandardCharsets.US_ASCII));
                    sockets.add(halfway);
                }
                Socket afterARequest = open(cluster.url(0));
                afterARequest.getOutputStream().write("GET /v0/status HTTP/1.1\r\nHost: k\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                sockets.add(afterARequest);

                long started = System.nanoTime();
                for (Socket socket : sockets) {
                    assertThat(readsToTheEnd(socket)).as("%s closed by the node", socket).isTrue();
                }
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
            } finally {
                for (Socket socket : sockets) {
                    socket.close();
                }
            }
            // The nodes' own connections between them carry on.
            assertThat(cluster.client(0).put("after-idle", "v".getBytes(StandardCharsets.UTF_8), "2/2").statusCode()).isEqualTo(201);
            Thread.sleep(1_500);
            assertThat(cluster.client(1).put("after-idle", "w".getBytes(StandardCharsets.UTF_8), "2/2").statusCode()).isEqualTo(201);
        }
    }

    private static Socket open(String url) throws IOException {
        URI uri = URI.create(url);
        Socket socket = new Socket(uri.getHost(), uri.getPort());
        socket.setSoTimeout(10_000);
        return socket;
    }

    /** True when the node closes the connection (an answer to a request may come first); false on a timeout. */
    private static boolean readsToTheEnd(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[4096];
        try {
            while (in.read(buffer) >= 0) {
                // the answer to a request the socket sent, if any
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }
}
