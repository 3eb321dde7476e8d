package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node whose clock runs 20 minutes ahead, beyond the tolerated skew (one minute by default): the
 * others refuse its calls, so it can neither write its far-future versions to their replicas nor
 * drag their clocks along, and the cluster goes on without it.
 */
class ClockTooFarAheadTest {

    static final int AHEAD = 0;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "2s"),
                node -> node == AHEAD ? Map.of("kvlab.cluster.clock-offset", "20m") : Map.of());
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void itsWritesToThePeersAreRefusedWithWhyAndTheOthersServeOnWithoutIt() {
        HttpResponse<byte[]> refused = cluster.client(AHEAD).put("skewed", bytes("from the future"), "2/3");
        assertThat(refused.statusCode()).isEqualTo(504);
        assertThat(text(refused)).contains("outside the tolerated clock skew", "kvlab.cluster.max-clock-skew");

        assertThat(cluster.client(1).put("skewed", bytes("from now"), "2/3").statusCode()).isEqualTo(201);
        assertThat(text(cluster.client(2).get("skewed", "2/3"))).as("read through a node with a good clock").isEqualTo("from now");
        assertThat(cluster.holders("skewed")).as("nodes 1 and 2 hold the key").contains(1, 2);
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
