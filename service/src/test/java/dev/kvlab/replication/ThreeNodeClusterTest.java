package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.net.URI;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The invariants of API.md on a cluster of three real nodes. */
class ThreeNodeClusterTest {

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
    void replicasBeyondTheClusterOrMalformedAre400() {
        KvClient client = cluster.client(0);
        assertThat(client.put("bad", "v".getBytes(), "4/4").statusCode()).isEqualTo(400);
        // Beyond the replicas a record can name, too: refused before the write makes its record.
        assertThat(client.put("bad", "v".getBytes(), "1/100").statusCode()).isEqualTo(400);
        assertThat(client.delete("bad", "1/100").statusCode()).isEqualTo(400);
        assertThat(text(client.get("bad", "1/4"))).contains("cluster has 3 nodes");
        assertThat(client.get("bad", "3/2").statusCode()).isEqualTo(400);
        assertThat(client.delete("bad", "0/3").statusCode()).isEqualTo(400);
        assertThat(client.get("bad", "two/3").statusCode()).isEqualTo(400);
    }

    @Test
    void theDefaultIsAQuorumOfAllNodes() {
        assertThat(cluster.client(0).put("default-quorum", "v").statusCode()).isEqualTo(201);
        awaitHolders("default-quorum", 3);

        cluster.stopNode(1);
        assertThat(text(cluster.client(2).get("default-quorum"))).as("2/3 with one node down").isEqualTo("v");
        assertThat(cluster.client(0).put("default-quorum", "w").statusCode()).isEqualTo(201);

        cluster.stopNode(2);
        HttpResponse<byte[]> lonely = cluster.client(0).get("default-quorum");
        assertThat(lonely.statusCode()).as("2/3 with two nodes down").isEqualTo(504);
        assertThat(text(lonely)).contains("2 needed");
    }

    @Test
    void unreachableReplicasGive504Quickly() {
        cluster.client(0).put("unreachable", "kept".getBytes(), "3/3");
        cluster.stopNode(1);
        cluster.stopNode(2);

        long started = System.nanoTime();
        HttpResponse<byte[]> put = cluster.client(0).put("unreachable", "lost".getBytes(), "2/3");
        assertThat(put.statusCode()).isEqualTo(504);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("refused connections fail fast").isLessThan(Duration.ofSeconds(2));
        assertThat(text(put)).as("the answer says which replicas failed and why")
                .containsPattern("^only [01] of 3 replicas answered, 2 needed; 2 failed: ")
                .contains(":" + URI.create(cluster.url(1)).getPort(), ":" + URI.create(cluster.url(2)).getPort());
        assertThat(cluster.client(0).get("unreachable", "3/3").statusCode()).isEqualTo(504);
        assertThat(cluster.client(0).delete("unreachable", "2/3").statusCode()).isEqualTo(504);
        assertThat(text(cluster.management(0).send("GET", "/actuator/prometheus", java.net.http.HttpRequest.BodyPublishers.noBody())))
                .containsPattern("kvlab_quorum_failures_total\\{application=\"kvlab\",operation=\"put\"} [1-9]")
                .containsPattern("kvlab_replica_failures_total\\{application=\"kvlab\",reason=\"error\"} [1-9]");
    }

    @Test
    void aTwoOfThreeWriteIsSeenByATwoOfThreeReadWhicheverNodeIsDown() {
        for (int down = 0; down < 3; down++) {
            String key = "overlap-" + down;
            assertThat(cluster.client((down + 1) % 3).put(key, ("v" + down).getBytes(), "2/3").statusCode()).isEqualTo(201);
            cluster.stopNode(down);
            HttpResponse<byte[]> read = cluster.client((down + 2) % 3).get(key, "2/3");
            assertThat(read.statusCode()).as("node %d down", down).isEqualTo(200);
            assertThat(text(read)).isEqualTo("v" + down);
            cluster.startNode(down);
        }
    }

    @Test
    void aTwoOfThreeReadSeesATwoOfThreeDeleteWhicheverNodeIsDown() {
        for (int down = 0; down < 3; down++) {
            String key = "deleted-" + down;
            cluster.client(0).put(key, "v".getBytes(), "3/3");
            assertThat(cluster.client((down + 1) % 3).delete(key, "2/3").statusCode()).isEqualTo(202);
            cluster.stopNode(down);
            assertThat(cluster.client((down + 2) % 3).get(key, "2/3").statusCode()).as("node %d down", down).isEqualTo(404);
            cluster.startNode(down);
        }
    }

    @Test
    void aNodeThatMissedAWriteADeleteAndARecreateShowsTheNewestAfterItReturns() {
        cluster.client(0).put("missed-write", "old".getBytes(), "3/3");
        cluster.client(0).put("missed-delete", "doomed".getBytes(), "3/3");
        cluster.client(0).put("missed-recreate", "first".getBytes(), "3/3");

        cluster.stopNode(2);
        assertThat(cluster.client(0).put("missed-write", "new".getBytes(), "2/3").statusCode()).isEqualTo(201);
        assertThat(cluster.client(1).delete("missed-delete", "2/3").statusCode()).isEqualTo(202);
        cluster.client(0).delete("missed-recreate", "2/3");
        assertThat(cluster.client(1).put("missed-recreate", "second".getBytes(), "2/3").statusCode()).isEqualTo(201);
        cluster.startNode(2);

        KvClient returned = cluster.client(2);
        assertThat(text(returned.internalRecord("missed-write"))).as("the returned replica itself is stale").isEqualTo("old");
        assertThat(text(returned.get("missed-write", "3/3"))).isEqualTo("new");
        assertThat(returned.get("missed-delete", "3/3").statusCode()).isEqualTo(404);
        assertThat(text(returned.get("missed-recreate", "3/3"))).isEqualTo("second");
        // Read repair brought the returned replica up to date in the background.
        awaitInternal(2, "missed-write", "new");
        awaitInternal(2, "missed-recreate", "second");
        assertThat(returned.get("missed-delete", "1/1").statusCode()).isEqualTo(404);
        assertThat(text(cluster.management(2).send("GET", "/actuator/prometheus", java.net.http.HttpRequest.BodyPublishers.noBody())))
                .containsPattern("kvlab_read_repairs_total\\{application=\"kvlab\",result=\"repaired\"} [1-9]");
    }

    @Test
    void aOneOfOneWriteIsVisibleThroughEveryCoordinator() {
        for (int writer = 0; writer < 3; writer++) {
            String key = "one-of-one-" + writer;
            assertThat(cluster.client(writer).put(key, "v".getBytes(), "1/1").statusCode()).isEqualTo(201);
            for (int reader = 0; reader < 3; reader++) {
                assertThat(text(cluster.client(reader).get(key, "1/1"))).as("written via %d, read via %d", writer, reader).isEqualTo("v");
            }
            assertThat(cluster.holders(key)).as("1/1 stores one copy").hasSize(1);
        }
    }

    @Test
    void aPutStoresAtMostFromCopies() {
        assertThat(cluster.client(0).put("two-copies", "v".getBytes(), "1/2").statusCode()).isEqualTo(201);
        awaitHolders("two-copies", 2);
        sleep(300);
        assertThat(cluster.holders("two-copies")).hasSize(2);
    }

    @Test
    void aLateReplicaStillGetsTheWriteAfterTheClientHasItsAnswer() {
        assertThat(cluster.client(1).put("late", "v".getBytes(), "1/3").statusCode()).isEqualTo(201);

        awaitHolders("late", 3);
    }

    @Test
    void theClusterRangeMergesEveryNodeAndWorksWithOneNodeDown() throws Exception {
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            String key = String.format("merge-%02d", i);
            // Spread over the nodes with different replica sets; 2/3 leaves a copy on 2 of 3 nodes.
            cluster.client(i % 3).put(key, ("value-" + i).getBytes(), i % 2 == 0 ? "2/3" : "3/3");
            expected.add(key + "\nvalue-" + i);
        }
        cluster.client(0).delete("merge-07", "3/3");
        expected.remove("merge-07\nvalue-7");

        assertThat(range(0, "merge-", "merge-~")).containsExactlyElementsOf(expected);
        cluster.stopNode(1);
        assertThat(range(2, "merge-", "merge-~")).as("one node down").containsExactlyElementsOf(expected);
    }

    @Test
    void aNodeStopsWithoutWaitingForItsPeersStreamsAndTheyReopenWhenItIsBack() {
        for (int i = 0; i < 20; i++) {
            assertThat(cluster.client(0).put("stream-" + i, "v".getBytes(), "3/3").statusCode()).isEqualTo(201);
        }

        long started = System.nanoTime();
        cluster.stopNode(1);
        assertThat(Duration.ofNanos(System.nanoTime() - started))
                .as("the graceful shutdown does not wait for node 0's open stream (20 s drain timeout)")
                .isLessThan(Duration.ofSeconds(10));

        assertThat(cluster.client(0).put("stream-while-down", "v".getBytes(), "2/3").statusCode()).isEqualTo(201);
        cluster.startNode(1);
        assertThat(cluster.client(0).put("stream-after", "w".getBytes(), "3/3").statusCode()).as("a new stream to the restarted node").isEqualTo(201);
        assertThat(text(cluster.client(0).get("stream-after", "3/3"))).isEqualTo("w");
    }

    private static List<String> range(int node, String start, String end) throws Exception {
        URI url = URI.create(cluster.url(node));
        RawHttp.Response response = RawHttp.get(url.getPort(), "/v0/entities?start=" + start + "&end=" + end);
        assertThat(response.status()).isEqualTo(200);
        return response.chunks().stream().map(chunk -> new String(chunk, StandardCharsets.UTF_8)).toList();
    }

    private static void awaitHolders(String key, int count) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (cluster.holders(key).size() < count && System.nanoTime() < deadline) {
            sleep(20);
        }
        assertThat(cluster.holders(key)).as("replicas holding " + key).hasSize(count);
    }

    private static void awaitInternal(int node, String key, String value) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!value.equals(text(cluster.client(node).internalRecord(key))) && System.nanoTime() < deadline) {
            sleep(20);
        }
        assertThat(text(cluster.client(node).internalRecord(key))).as("replica %d of %s", node, key).isEqualTo(value);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
