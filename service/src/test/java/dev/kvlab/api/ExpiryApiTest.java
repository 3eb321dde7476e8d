package dev.kvlab.api;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.cluster.Topology;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.net.URI;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code PUT /v0/entity?id=k&ttl=<seconds>} on three nodes: the key answers until its expiry, then
 * 404 at every {@code ack/from} and through every node, ranges skip it, and bad values are 400s.
 * Hints and repair are off, so what a replica holds is what the writes left there.
 */
class ExpiryApiTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "1s", "kvlab.heal.hints.enabled", "false",
                "kvlab.heal.repair.enabled", "false", "kvlab.expiry.max-ttl", "1h"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    static HttpResponse<byte[]> putWithTtl(int node, String key, String value, String ttl, String replicas) {
        String target = KvClient.entity(key, replicas) + "&ttl=" + ttl;
        return cluster.client(node).send("PUT", target, BodyPublishers.ofString(value));
    }

    @Test
    void aKeyWithATtlAnswersUntilItExpiresThen404AtEveryAckFromThroughEveryNode() {
        assertThat(putWithTtl(0, "short-lived", "soon gone", "1", "3/3").statusCode()).isEqualTo(201);
        assertThat(text(cluster.client(1).get("short-lived", "2/3"))).isEqualTo("soon gone");

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            for (int node = 0; node < 3; node++) {
                for (String replicas : List.of("1/1", "1/3", "2/3", "3/3")) {
                    assertThat(cluster.client(node).get("short-lived", replicas).statusCode()).as("through %d at %s", node, replicas).isEqualTo(404);
                }
            }
        });
    }

    @Test
    void anExpiredWriteHidesTheOlderValueAReplicaThatMissedItStillHolds() {
        String key = "missed";
        assertThat(cluster.client(0).put(key, "old, never expires".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
        int missing = replicaOf(key, 1);
        int coordinator = (missing + 1) % 3;
        cluster.stopNode(missing);
        try {
            assertThat(putWithTtl(coordinator, key, "new, expiring", "1", "2/3").statusCode()).isEqualTo(201);
        } finally {
            cluster.startNode(missing);
        }
        assertThat(text(cluster.client(missing).internalRecord(key))).as("the replica that missed the write").isEqualTo("old, never expires");

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            for (int node = 0; node < 3; node++) {
                for (String replicas : List.of("2/3", "3/3")) {
                    assertThat(cluster.client(node).get(key, replicas).statusCode()).as("through %d at %s", node, replicas).isEqualTo(404);
                }
            }
        });
        assertThat(cluster.client(0).get(key, "1/1").statusCode()).as("the first replica has the expired write").isEqualTo(404);
    }

    @Test
    void rangesSkipExpiredKeysThroughEveryNode() throws Exception {
        assertThat(cluster.client(0).put("span-a", "forever".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
        assertThat(putWithTtl(1, "span-b", "brief", "1", "3/3").statusCode()).isEqualTo(201);
        assertThat(putWithTtl(2, "span-c", "an hour", "3600", "2/3").statusCode()).isEqualTo(201);
        assertThat(keys(0, "/v0/entities?start=span-&end=span-z")).containsExactly("span-a", "span-b", "span-c");

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            for (int node = 0; node < 3; node++) {
                assertThat(keys(node, "/v0/entities?start=span-&end=span-z")).as("through %d", node).containsExactly("span-a", "span-c");
            }
        });
    }

    @Test
    void aBadTtlIs400AndStoresNothing() {
        for (String ttl : List.of("0", "-5", "abc", "1.5", "", "3601", "99999999999999999999999")) {
            HttpResponse<byte[]> response = putWithTtl(0, "bad-ttl", "v", ttl, null);
            assertThat(response.statusCode()).as("ttl=%s", ttl).isEqualTo(400);
            assertThat(text(response)).as("ttl=%s", ttl).contains("ttl");
        }
        assertThat(cluster.client(0).get("bad-ttl").statusCode()).isEqualTo(404);
        assertThat(putWithTtl(0, "bad-ttl", "v", "3600", null).statusCode()).as("the largest allowed here").isEqualTo(201);
    }

    @Test
    void aTtlOnAGetOrADeleteIs400() {
        HttpResponse<byte[]> get = cluster.client(0).send("GET", "/v0/entity?id=x&ttl=5", BodyPublishers.noBody());
        assertThat(get.statusCode()).isEqualTo(400);
        assertThat(text(get)).contains("ttl applies to PUT only");
        assertThat(cluster.client(0).send("DELETE", "/v0/entity?id=x&ttl=5", BodyPublishers.noBody()).statusCode()).isEqualTo(400);
    }

    /** A conditional PUT keeps its ttl, and an expired key is absent to If-None-Match: *, as a deleted one is. */
    @Test
    void aConditionalPutKeepsItsTtlAndAnExpiredKeyCountsAsAbsentToItsCondition() {
        String key = "conditional-ttl";
        String target = KvClient.entity(key, "2/3") + "&ttl=1";
        var created = cluster.client(0).send("PUT", target, BodyPublishers.ofString("first"), "If-None-Match", "*");
        assertThat(created.statusCode()).as(text(created)).isEqualTo(201);
        assertThat(cluster.client(1).send("PUT", target, BodyPublishers.ofString("second"), "If-None-Match", "*").statusCode())
                .as("the key exists until it expires").isEqualTo(412);

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(cluster.client(2).get(key, "2/3").statusCode()).isEqualTo(404));
        var again = cluster.client(1).send("PUT", KvClient.entity(key, "2/3"), BodyPublishers.ofString("after expiry"), "If-None-Match", "*");
        assertThat(again.statusCode()).as(text(again)).isEqualTo(201);
        assertThat(text(cluster.client(2).get(key, "2/3"))).isEqualTo("after expiry");
    }

    @Test
    void aPutWithoutTtlOverAnExpiringOneNeverExpires() throws Exception {
        assertThat(putWithTtl(0, "renewed", "brief", "1", "3/3").statusCode()).isEqualTo(201);
        assertThat(cluster.client(1).put("renewed", "kept".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);

        Thread.sleep(1500);

        assertThat(text(cluster.client(2).get("renewed", "3/3"))).isEqualTo("kept");
    }

    /** The node that is the {@code rank}-th replica of {@code key} (0: the first). */
    static int replicaOf(String key, int rank) {
        Topology topology = new Topology(cluster.nodeUrls().stream().sorted().toList(), cluster.replicaUrl(0));
        String url = topology.replicasFor(key.getBytes(StandardCharsets.UTF_8), 3).get(rank);
        for (int node = 0; ; node++) {
            if (cluster.replicaUrl(node).equals(url)) {
                return node;
            }
        }
    }

    static List<String> keys(int node, String target) throws Exception {
        RawHttp.Response response = RawHttp.get(URI.create(cluster.url(node)).getPort(), target);
        assertThat(response.status()).isEqualTo(200);
        return response.chunks().stream().map(chunk -> {
            int newline = 0;
            while (chunk[newline] != '\n') {
                newline++;
            }
            return new String(Arrays.copyOf(chunk, newline), StandardCharsets.UTF_8);
        }).toList();
    }
}
