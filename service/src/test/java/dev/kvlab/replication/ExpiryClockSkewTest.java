package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Expiry on three nodes whose clocks disagree: node 0's runs 10 s ahead, node 2's 10 s behind,
 * within the tolerated skew (30 s). Every replica holds the same expiry, fixed by the write's
 * version; whether it has passed is decided by the clock of the node that coordinates the read. So
 * near the expiry the coordinators disagree, for at most their clocks' difference, and after it
 * plus the skew every node answers 404.
 */
class ExpiryClockSkewTest {

    static final int FAST = 0;
    static final int PLAIN = 1;
    static final int SLOW = 2;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "2s", "kvlab.cluster.max-clock-skew", "30s"),
                InProcessCluster.clockOffsets("10s", "0s", "-10s"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void eachCoordinatorJudgesTheSharedExpiryByItsOwnClock() {
        long written = System.currentTimeMillis();
        assertThat(cluster.client(PLAIN).send("PUT", KvClient.entity("skewed", "3/3") + "&ttl=5", BodyPublishers.ofString("v"))
                .statusCode()).isEqualTo(201);
        long expiresAt = Long.parseLong(cluster.client(PLAIN).internalRecord("skewed").headers().firstValue("X-Kvlab-Expires-At").orElseThrow());
        for (int node = 0; node < 3; node++) {
            assertThat(cluster.client(node).internalRecord("skewed").headers().firstValue("X-Kvlab-Expires-At"))
                    .as("node %d's replica", node).contains(Long.toString(expiresAt));
        }
        assertThat(expiresAt - written).as("the plain node's version time plus 5 s").isBetween(4_000L, 6_000L);

        // The fast clock is past the expiry already; the others are not.
        assertThat(status(FAST)).isEqualTo(404);
        assertThat(status(PLAIN)).isEqualTo(200);
        assertThat(status(SLOW)).isEqualTo(200);

        // Once the plain clock passes it, the slow node alone still answers, for up to 10 s more.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> status(PLAIN) == 404);
        assertThat(status(SLOW)).isEqualTo(200);
        assertThat(System.currentTimeMillis()).as("still before the slow clock passes the expiry").isLessThan(expiresAt + 10_000);

        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> status(SLOW) == 404);
        assertThat(System.currentTimeMillis()).as("the slow clock's lag").isGreaterThanOrEqualTo(expiresAt + 10_000 - 200);
        for (int node = 0; node < 3; node++) {
            assertThat(status(node)).as("through node %d", node).isEqualTo(404);
        }
    }

    static int status(int node) {
        return cluster.client(node).get("skewed", "3/3").statusCode();
    }
}
