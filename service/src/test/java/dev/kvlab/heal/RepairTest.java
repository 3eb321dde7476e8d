package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.peer.ReplicaProtocol;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Anti-entropy repair alone (hints switched off): replicas that missed writes and deletes, or lost
 * their whole volume, catch up from their peers in the background, with no client read to show the
 * way; tombstones go once repair has covered them, and the deleted values stay deleted.
 */
class RepairTest {

    static final int KEYS = 300;
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static Map<String, String> settings(String... more) {
        Map<String, String> settings = new HashMap<>(Map.of(
                "kvlab.replication.timeout", "500ms",
                "kvlab.heal.hints.enabled", "false",
                "kvlab.heal.repair.interval", "1s"));
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    /** Three nodes whose rounds run only when a test asks, holding {@code keys} keys written at 3/3. */
    static InProcessCluster threeNodesInSync(int keys) throws Exception {
        InProcessCluster cluster = InProcessCluster.start(3, settings("kvlab.heal.repair.interval", "10m"));
        for (int i = 0; i < keys; i++) {
            assertThat(cluster.client(i % 3).put("key-" + i, bytes("value " + i), "3/3").statusCode()).isEqualTo(201);
        }
        return cluster;
    }

    @Test
    void aNodeBackFromAnOutageGetsTheWritesAndDeletesItMissed() throws Exception {
        cluster = InProcessCluster.start(3, settings());
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(0).put("deleted-" + i, bytes("before"), "3/3").statusCode()).isEqualTo(201);
        }
        cluster.stopNode(2);
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 2).put("written-" + i, bytes("value " + i), "2/3").statusCode()).isEqualTo(201);
            assertThat(cluster.client(i % 2).delete("deleted-" + i, "2/3").statusCode()).isEqualTo(202);
        }
        cluster.startNode(2);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (int i = 0; i < KEYS; i++) {
                assertThat(text(cluster.client(2).internalRecord("written-" + i))).as("node 2's own replica").isEqualTo("value " + i);
                assertThat(cluster.client(2).internalRecord("deleted-" + i).headers().firstValue("X-Kvlab-Tombstone"))
                        .as("node 2's own replica of a deleted key").contains("true");
            }
        });
        RepairService repair = cluster.bean(2, RepairService.class);
        assertThat(repair.recordsReceived() + cluster.bean(0, RepairService.class).recordsSent()
                + cluster.bean(1, RepairService.class).recordsSent()).as("records copied to node 2").isGreaterThanOrEqualTo(2L * KEYS);
    }

    @Test
    void aNodeRestartedOnAnEmptyVolumeIsRefilled() throws Exception {
        cluster = InProcessCluster.start(3, settings());
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 3).put("key-" + i, bytes("value " + i), "3/3").statusCode()).isEqualTo(201);
        }
        cluster.wipeNode(1);
        cluster.startNode(1);
        assertThat(cluster.client(1).internalRecord("key-0").statusCode()).as("the wiped node starts empty").isEqualTo(404);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (int i = 0; i < KEYS; i++) {
                assertThat(text(cluster.client(1).internalRecord("key-" + i))).isEqualTo("value " + i);
            }
        });

        // What a user watching the refill sees on the node's management port.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            JsonNode status = JsonMapper.shared().readTree(cluster.management(1).send("GET", "/actuator/kvlab",
                    HttpRequest.BodyPublishers.noBody()).body());
            assertThat(status.path("nodes")).hasSize(3);
            JsonNode peers = status.path("repair").path("peers");
            assertThat(peers.size()).isEqualTo(2);
            for (JsonNode peer : peers) {
                assertThat(peer.path("lastCompleteRoundStarted").isString()).as(peer.toString()).isTrue();
                assertThat(peer.path("lastRound").path("outcome").asString()).as(peer.toString()).isEqualTo("complete");
                for (String figure : new String[] {"bucketsDiffering", "bucketsByChangedKeys", "keysCompared", "recordsRead"}) {
                    assertThat(peer.path("lastRound").path(figure).isNumber()).as(figure + " in " + peer).isTrue();
                }
            }
        });
        // And on its Prometheus page: the refill's rounds, per peer, in seconds since the epoch.
        for (int peer : new int[] {0, 2}) {
            assertThat(cluster.peerMetric(1, "kvlab_peer_repair_last_complete_seconds", cluster.url(peer)))
                    .as("the last complete round with node %d", peer).isGreaterThan(1.7e9);
        }
        long copied = cluster.bean(1, RepairService.class).recordsReceived() + cluster.bean(0, RepairService.class).recordsSent()
                + cluster.bean(2, RepairService.class).recordsSent();
        assertThat(copied).as("records copied to the wiped node").isGreaterThanOrEqualTo(KEYS);
        var asked = cluster.management(1).send("POST", "/actuator/kvlab/repair", HttpRequest.BodyPublishers.ofString("{}"),
                "Content-Type", "application/json", "Authorization", "Bearer " + cluster.secret());
        assertThat(asked.statusCode()).isEqualTo(200);
        assertThat(cluster.management(1).send("POST", "/actuator/kvlab/shrug", HttpRequest.BodyPublishers.ofString("{}"),
                "Content-Type", "application/json", "Authorization", "Bearer " + cluster.secret()).statusCode()).isEqualTo(400);
    }

    @Test
    void aRoundsEndWithAStartInTheFutureIsRefusedAndPurgesNothing() throws Exception {
        // No rounds of their own: only the reports below could let node 0 purge its tombstones.
        cluster = InProcessCluster.start(3, settings("kvlab.heal.repair.enabled", "false", "kvlab.heal.repair.tombstone-grace", "1s",
                "kvlab.heal.handoff.interval", "1s", "kvlab.heal.handoff.window", "1s"));
        assertThat(cluster.client(0).put("kept-deleted", bytes("value"), "3/3").statusCode()).isEqualTo(201);
        assertThat(cluster.client(0).delete("kept-deleted", "3/3").statusCode()).isEqualTo(202);
        Thread.sleep(2000);
        long farFuture = System.currentTimeMillis() + Duration.ofDays(365).toMillis();

        for (int peer : new int[] {1, 2}) {
            HttpResponse<byte[]> refused = cluster.client(0).send("POST", ReplicaProtocol.REPAIR_DONE_PATH,
                    HttpRequest.BodyPublishers.ofByteArray(roundDone(cluster.url(peer), farFuture)));
            assertThat(refused.statusCode()).isEqualTo(400);
            assertThat(text(refused)).contains("after its end was reported");
            assertThat(cluster.bean(0, RepairService.class).lastCompleteRoundStarted(cluster.url(peer))).isEqualTo(PeerRepair.NEVER);
        }
        HttpResponse<byte[]> ancient = cluster.client(0).send("POST", ReplicaProtocol.REPAIR_DONE_PATH,
                HttpRequest.BodyPublishers.ofByteArray(roundDone(cluster.url(1), 1)));
        assertThat(ancient.statusCode()).isEqualTo(400);
        assertThat(text(ancient)).contains("more than a day before");

        // Sweeps come and go: the tombstone stays, as no round covered it.
        Thread.sleep(3000);
        assertThat(cluster.client(0).internalRecord("kept-deleted").headers().firstValue("X-Kvlab-Tombstone")).contains("true");
        assertThat(cluster.bean(0, Handoff.class).purged()).isZero();

        // A plausible report is taken.
        long started = System.currentTimeMillis() - 1000;
        assertThat(cluster.client(0).send("POST", ReplicaProtocol.REPAIR_DONE_PATH,
                HttpRequest.BodyPublishers.ofByteArray(roundDone(cluster.url(1), started))).statusCode()).isEqualTo(204);
        assertThat(cluster.bean(0, RepairService.class).lastCompleteRoundStarted(cluster.url(1))).isEqualTo(started);
    }

    /** The body of {@code POST /internal/v1/repair/done}: {@code [initiator length:2][initiator][started ms:8]}. */
    private static byte[] roundDone(String initiator, long startedMillis) {
        byte[] name = initiator.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + name.length + 8).putShort((short) name.length).put(name).putLong(startedMillis).array();
    }

    @Test
    void tombstonesArePurgedOnceRepairCoveredThemAndTheValueStaysDeleted() throws Exception {
        cluster = InProcessCluster.start(3, settings("kvlab.heal.repair.tombstone-grace", "2s",
                "kvlab.heal.handoff.interval", "1s", "kvlab.heal.handoff.window", "1s"));
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(0).put("key-" + i, bytes("value " + i), "3/3").statusCode()).isEqualTo(201);
        }
        cluster.stopNode(2);
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 2).delete("key-" + i, "2/3").statusCode()).isEqualTo(202);
        }
        // Past the grace, with node 2 away: its peers keep their tombstones, which it has not seen.
        Thread.sleep(4000);
        assertThat(cluster.client(0).internalRecord("key-0").statusCode()).as("a tombstone waits for its owners' repair").isEqualTo(200);

        cluster.startNode(2);
        await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
            for (int node = 0; node < 3; node++) {
                for (int i = 0; i < KEYS; i++) {
                    assertThat(cluster.client(node).internalRecord("key-" + i).statusCode()).as("node %d, key-%d", node, i).isEqualTo(404);
                }
            }
        });
        // A few more rounds: nothing comes back.
        Thread.sleep(3000);
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 3).get("key-" + i, "3/3").statusCode()).isEqualTo(404);
            assertThat(cluster.holders("key-" + i)).isEmpty();
        }
        assertThat(cluster.bean(0, Handoff.class).purged()).isEqualTo(KEYS);
    }
}
