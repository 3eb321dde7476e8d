package dev.kvlab.heal;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.cluster.Topology;
import dev.kvlab.storage.ExpiryReaper;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node that was down while a key was written with a time to live gets the write from a hint with
 * the same expiry as the replicas that took it, and the key expires and is reaped there too.
 */
class ExpiryHintTest {

    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aHintedExpiringWriteKeepsItsExpiryOnTheNodeThatMissedIt() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "500ms",
                "kvlab.heal.hints.replay-interval", "200ms", "kvlab.heal.repair.enabled", "false",
                "kvlab.cluster.max-clock-skew", "1s", "kvlab.expiry.reap-interval", "200ms"));
        String key = keyFirstOwnedBy(2);
        cluster.stopNode(2);
        assertThat(cluster.client(0).send("PUT", KvClient.entity(key, "2/3") + "&ttl=15", BodyPublishers.ofString("hinted"))
                .statusCode()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.bean(0, HintStore.class).pendingCount() == 1);
        String expiresAt = cluster.client(0).internalRecord(key).headers().firstValue("X-Kvlab-Expires-At").orElseThrow();

        cluster.startNode(2);
        await().atMost(Duration.ofSeconds(20)).until(() -> cluster.bean(0, HintStore.class).pendingCount() == 0);

        HttpResponse<byte[]> replayed = cluster.client(2).internalRecord(key);
        assertThat(text(replayed)).isEqualTo("hinted");
        assertThat(replayed.headers().firstValue("X-Kvlab-Expires-At")).as("node 2's replica, from the hint").contains(expiresAt);
        // On a loaded machine the replay may come after the expiry: node 2 must then answer as expired.
        long asked = System.currentTimeMillis();
        HttpResponse<byte[]> alone = cluster.client(2).get(key, "1/1");
        long answered = System.currentTimeMillis();
        if (answered < Long.parseLong(expiresAt)) {
            assertThat(text(alone)).as("node 2 alone, before the expiry").isEqualTo("hinted");
        } else if (asked >= Long.parseLong(expiresAt)) {
            assertThat(alone.statusCode()).as("node 2 alone, after the expiry").isEqualTo(404);
        }

        await().atMost(Duration.ofSeconds(25)).pollInterval(Duration.ofMillis(100))
                .until(() -> cluster.client(2).get(key, "1/1").statusCode() == 404);
        assertThat(System.currentTimeMillis()).as("not before the expiry").isGreaterThanOrEqualTo(Long.parseLong(expiresAt));
        // Then reaped there: a tombstone of the same write, whose value compaction drops.
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.bean(2, ExpiryReaper.class).reaped() == 1);
        HttpResponse<byte[]> reaped = cluster.client(2).internalRecord(key);
        assertThat(reaped.headers().firstValue("X-Kvlab-Tombstone")).contains("true");
        assertThat(reaped.headers().firstValue("X-Kvlab-Expires-At")).contains(expiresAt);
        assertThat(reaped.headers().firstValue("X-Kvlab-Version")).isEqualTo(replayed.headers().firstValue("X-Kvlab-Version"));
        assertThat(text(cluster.management(2).send("GET", "/actuator/prometheus", BodyPublishers.noBody())))
                .contains("kvlab_storage_expired_reaped_total{application=\"kvlab\"} 1.0");
    }

    /** A key whose first replica (the one a 1/1 read asks) is {@code node}. */
    private String keyFirstOwnedBy(int node) {
        Topology topology = new Topology(cluster.nodeUrls().stream().sorted().toList(), cluster.replicaUrl(0));
        for (int i = 0; ; i++) {
            String key = "hinted-" + i;
            if (topology.replicasFor(key.getBytes(StandardCharsets.UTF_8), 1).getFirst().equals(cluster.replicaUrl(node))) {
                return key;
            }
        }
    }
}
