package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Clocks 50 s behind, on time and 50 s ahead, each within the tolerated minute of the middle one:
 * the node ahead writes through the middle one a version the node behind cannot order a write after.
 * A conditional write through the node behind must then be refused, not answered 201 and lost under
 * the version it was conditional on.
 */
class ConditionalWriteClockBehindTest {

    static final int BEHIND = 0;
    static final int ON_TIME = 1;
    static final int AHEAD = 2;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "2s",
                        "kvlab.heal.hints.enabled", "false", "kvlab.heal.repair.enabled", "false"),
                InProcessCluster.clockOffsets("-50s", "0s", "50s"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aConditionalWriteThatCouldNotBeNewerThanWhatItReadIsRefused() {
        assertThat(cluster.client(AHEAD).put("ahead", "from the future".getBytes(), "2/3").statusCode()).isEqualTo(201);
        HttpResponse<byte[]> read = cluster.client(ON_TIME).get("ahead", "2/3");
        String tag = read.headers().firstValue("etag").orElseThrow();

        HttpResponse<byte[]> refused = cluster.client(BEHIND).send("PUT", KvClient.entity("ahead", "2/3"),
                BodyPublishers.ofString("lost"), "If-Match", tag);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(text(refused)).contains("ahead of this node's clock", "kvlab.cluster.max-clock-skew");
        assertThat(text(cluster.client(ON_TIME).get("ahead", "2/3"))).isEqualTo("from the future");
        assertThat(cluster.client(ON_TIME).send("PUT", KvClient.entity("ahead", "2/3"), BodyPublishers.ofString("next"), "If-Match", tag)
                .statusCode()).as("through a node whose clock can order it").isEqualTo(201);
        assertThat(text(cluster.client(ON_TIME).get("ahead", "2/3"))).isEqualTo("next");
    }
}
