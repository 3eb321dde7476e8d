package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static dev.kvlab.testing.MultiKeyRequests.NDJSON;
import static dev.kvlab.testing.MultiKeyRequests.base64;
import static dev.kvlab.testing.MultiKeyRequests.batch;
import static dev.kvlab.testing.MultiKeyRequests.chunks;
import static dev.kvlab.testing.MultiKeyRequests.deleteOp;
import static dev.kvlab.testing.MultiKeyRequests.keys;
import static dev.kvlab.testing.MultiKeyRequests.lines;
import static dev.kvlab.testing.MultiKeyRequests.post;
import static dev.kvlab.testing.MultiKeyRequests.putOp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.RawHttp;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Multi-gets and batches on three real nodes: each key read and written at the request's ack/from, with nodes down. */
class MultiKeyClusterTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @AfterEach
    void everyNodeBackUp() {
        for (int i = 0; i < 3; i++) {
            cluster.startNode(i);
        }
    }

    @Test
    void aMultiGetAtTwoOfThreeWithANodeDownAnswersEveryKeyInOrder() throws Exception {
        List<String> asked = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 19; i >= 0; i--) {
            String key = "down-one-" + i;
            assertThat(cluster.client(i % 3).put(key, ("v" + i).getBytes(), "3/3").statusCode()).isEqualTo(201);
            asked.add(key);
            expected.add(key + "\nv" + i);
        }
        asked.add(5, "down-one-absent");
        cluster.stopNode(1);

        RawHttp.Response chunked = post(port(0), "/v0/entities/get?replicas=2/3", keys(asked.toArray(String[]::new)));
        assertThat(chunked.status()).isEqualTo(200);
        assertThat(chunks(chunked)).containsExactlyElementsOf(expected);

        RawHttp.Response framed = post(port(2), "/v0/entities/get", keys(asked.toArray(String[]::new)), NDJSON);
        List<String> lines = lines(framed);
        assertThat(lines).hasSize(21);
        assertThat(lines.get(5)).isEqualTo("{\"key\":\"" + base64("down-one-absent") + "\",\"status\":404}");
        assertThat(lines.get(0)).startsWith("{\"key\":\"" + base64("down-one-19") + "\",\"status\":200,");
        assertThat(lines).filteredOn(line -> line.contains("\"status\":200")).hasSize(20);
    }

    @Test
    void keysThatCannotMakeTheirQuorumAre504AndNeverTakenForAbsent() throws Exception {
        cluster.client(0).put("down-two-a", "a".getBytes(), "3/3");
        cluster.client(0).put("down-two-b", "b".getBytes(), "3/3");
        cluster.stopNode(1);
        cluster.stopNode(2);

        RawHttp.Response framed = post(port(0), "/v0/entities/get?replicas=2/3", keys("down-two-a", "down-two-absent", "down-two-b"), NDJSON);
        assertThat(framed.status()).isEqualTo(200);
        assertThat(lines(framed)).hasSize(3).allSatisfy(line -> assertThat(line).contains("\"status\":504,\"error\":\"only 1 of 3 replicas answered, 2 needed"));
        assertThat(lines(framed).get(1)).startsWith("{\"key\":\"" + base64("down-two-absent") + "\"");

        RawHttp.Response chunked = post(port(0), "/v0/entities/get?replicas=2/3", keys("down-two-a", "down-two-b"));
        assertThat(chunked.status()).as("the course's format has no status per key: the answer fails").isEqualTo(504);
        assertThat(new String(chunked.body(), StandardCharsets.UTF_8)).contains("2 needed");

        RawHttp.Response one = post(port(0), "/v0/entities/get?replicas=1/3", keys("down-two-a", "down-two-absent", "down-two-b"));
        assertThat(chunks(one)).as("at 1/3 the node's own copy is enough").containsExactly("down-two-a\na", "down-two-b\nb");

        String byQuery = "/v0/entities/get?id=down-two-a&id=down-two-absent&id=down-two-b&replicas=";
        RawHttp.Response framedByQuery = RawHttp.get(port(0), byQuery + "2/3", NDJSON);
        assertThat(framedByQuery.status()).isEqualTo(200);
        assertThat(lines(framedByQuery)).as("the keys in the query get the statuses the keys in a body get").hasSize(3)
                .allSatisfy(line -> assertThat(line).contains("\"status\":504,\"error\":\"only 1 of 3 replicas answered, 2 needed"));
        assertThat(lines(framedByQuery).get(1)).startsWith("{\"key\":\"" + base64("down-two-absent") + "\"");
        assertThat(RawHttp.get(port(0), byQuery + "2/3").status()).isEqualTo(504);
        assertThat(chunks(RawHttp.get(port(0), byQuery + "1/3"))).containsExactly("down-two-a\na", "down-two-b\nb");
    }

    @Test
    void aBatchWithANodeDownIsAcknowledgedPerOperationAndReadableByASingleGet() throws Exception {
        cluster.client(0).put("batch-gone", "old".getBytes(), "3/3");
        cluster.stopNode(1);

        RawHttp.Response response = post(port(0), "/v0/entities/batch?replicas=2/3",
                batch(putOp("batch-x", "x".getBytes()), deleteOp("batch-gone"), putOp("batch-y", "y".getBytes())));

        assertThat(response.status()).isEqualTo(200);
        assertThat(lines(response)).containsExactly(
                "{\"key\":\"" + base64("batch-x") + "\",\"status\":201}",
                "{\"key\":\"" + base64("batch-gone") + "\",\"status\":202}",
                "{\"key\":\"" + base64("batch-y") + "\",\"status\":201}");
        assertThat(text(cluster.client(2).get("batch-x", "2/3"))).isEqualTo("x");
        assertThat(text(cluster.client(2).get("batch-y", "2/3"))).isEqualTo("y");
        assertThat(cluster.client(2).get("batch-gone", "2/3").statusCode()).isEqualTo(404);

        cluster.stopNode(2);
        RawHttp.Response unacknowledged = post(port(0), "/v0/entities/batch?replicas=2/3", batch(putOp("batch-z", "z".getBytes())));
        assertThat(unacknowledged.status()).isEqualTo(200);
        assertThat(lines(unacknowledged)).singleElement().asString()
                .startsWith("{\"key\":\"" + base64("batch-z") + "\",\"status\":504,\"error\":\"only 1 of 3 replicas answered, 2 needed");
    }

    @Test
    void replicasBeyondTheClusterAre400ForTheWholeRequest() throws Exception {
        RawHttp.Response get = post(port(0), "/v0/entities/get?replicas=4/4", keys("a", "b"));
        assertThat(get.status()).isEqualTo(400);
        assertThat(new String(get.body(), StandardCharsets.UTF_8)).contains("cluster has 3 nodes");
        assertThat(post(port(0), "/v0/entities/batch?replicas=1/4", batch(deleteOp("a"))).status()).isEqualTo(400);
    }

    private static int port(int node) {
        return URI.create(cluster.url(node)).getPort();
    }
}
