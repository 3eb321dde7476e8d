package dev.kvlab.peer;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.URLEncoder;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** With kvlab.replication.port, replica traffic has a port of its own and the client port has none of it. */
class ReplicaPortTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.startWithReplicaPorts(3);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void theClusterReplicatesOverTheReplicaPorts() {
        assertThat(cluster.client(0).put("replica-port", "v".getBytes(), "3/3").statusCode()).isEqualTo(201);

        assertThat(text(cluster.client(1).get("replica-port", "3/3"))).isEqualTo("v");
        assertThat(cluster.holders("replica-port")).containsExactly(0, 1, 2);
        assertThat(text(KvClient.signing(cluster.replicaUrl(2), cluster.secret()).internalRecord("replica-port"))).isEqualTo("v");
    }

    @Test
    void theClientPortDoesNotServeTheReplicaProtocol() {
        KvClient client = cluster.client(0);

        assertThat(client.internalRecord("anything").statusCode()).isEqualTo(404);
        assertThat(client.send("PUT", "/internal/v1/record?id=x", BodyPublishers.ofString("v")).statusCode()).isEqualTo(404);
        assertThat(client.send("GET", "/internal/v1/records?start=a", BodyPublishers.noBody()).statusCode()).isEqualTo(404);
    }

    @Test
    void anUnsignedCallOnTheReplicaPortGets401AndChangesNothing() {
        KvClient anyone = new KvClient(cluster.replicaUrl(0));

        HttpResponse<byte[]> forged = anyone.send("PUT", "/internal/v1/record?id=forged", BodyPublishers.ofString("evil"),
                ReplicaProtocol.VERSION_HEADER, ReplicaEndpointsTest.FAR_FUTURE);

        assertThat(forged.statusCode()).isEqualTo(401);
        assertThat(text(forged)).contains("must be signed with the cluster's secret");
        assertThat(cluster.holders("forged")).isEmpty();
    }

    @Test
    void aRangeWithLongBoundsIsReadAcrossTheNodes() {
        // Bounds of 1000 bytes each, every byte percent-encoded: the replicas' request line is over 6 KiB.
        String start = "\u00e9".repeat(500);
        String end = start + "z";
        String inside = start + "a";
        assertThat(cluster.client(0).put(inside, "long-bounds".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
        String target = "/v0/entities?start=" + URLEncoder.encode(start, StandardCharsets.UTF_8)
                + "&end=" + URLEncoder.encode(end, StandardCharsets.UTF_8) + "&replicas=3/3";
        assertThat(target.length()).isGreaterThan(4096);

        HttpResponse<byte[]> range = cluster.client(1).send("GET", target, BodyPublishers.noBody());

        assertThat(range.statusCode()).as(text(range)).isEqualTo(200);
        assertThat(text(range)).contains("long-bounds");
        // The call a coordinator makes of each peer for it (a peer that refused it would only be
        // left out of the range, and the coordinator's own copy would hide that).
        String records = ReplicaProtocol.RECORDS_PATH + "?start=" + ReplicaProtocol.encodeKey(start.getBytes(StandardCharsets.UTF_8))
                + "&end=" + ReplicaProtocol.encodeKey(end.getBytes(StandardCharsets.UTF_8));
        assertThat(records.length()).isGreaterThan(4096);
        HttpResponse<byte[]> peers = KvClient.signing(cluster.replicaUrl(2), cluster.secret()).send("GET", records, BodyPublishers.noBody());
        assertThat(peers.statusCode()).as(text(peers)).isEqualTo(200);
        assertThat(text(peers)).contains("long-bounds");
    }

    @Test
    void theReplicaPortDoesNotServeTheClientApi() {
        KvClient replicaPort = new KvClient(cluster.replicaUrl(0));

        assertThat(replicaPort.get("replica-port").statusCode()).isEqualTo(404);
    }
}
