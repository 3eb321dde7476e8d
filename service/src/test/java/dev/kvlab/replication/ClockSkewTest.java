package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.cluster.Topology;
import dev.kvlab.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three nodes whose clocks disagree by minutes: node 0's runs 3 minutes ahead, node 2's 3 minutes
 * behind, within the tolerated skew (10 minutes here). What the hybrid logical clock promises, and
 * where the promise ends.
 */
class ClockSkewTest {

    static final int FAST = 0;
    static final int PLAIN = 1;
    static final int SLOW = 2;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "2s", "kvlab.cluster.max-clock-skew", "10m"),
                InProcessCluster.clockOffsets("3m", "0s", "-3m"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aWriteMadeAfterAnotherWasSeenWinsWhateverTheClocksSay() {
        String key = keyOwnedAloneBy(PLAIN, "seen");
        assertThat(cluster.client(FAST).put(key, bytes("from the fast clock"), "1/1").statusCode()).isEqualTo(201);

        // The slow node reads the key first: its clock moves past the version it saw.
        assertThat(text(cluster.client(SLOW).get(key, "1/1"))).isEqualTo("from the fast clock");
        assertThat(cluster.client(SLOW).put(key, bytes("from the slow clock, after reading"), "1/1").statusCode()).isEqualTo(201);

        assertThat(text(cluster.client(PLAIN).get(key, "1/1"))).isEqualTo("from the slow clock, after reading");
    }

    @Test
    void aWriteThatSawNothingOfAnotherLosesToItWhenTheOthersClockIsAhead() {
        String key = keyOwnedAloneBy(PLAIN, "unseen");
        assertThat(cluster.client(FAST).put(key, bytes("from the fast clock"), "1/1").statusCode()).isEqualTo(201);

        // Acknowledged later in real time, but through a node that has seen nothing of the first
        // write: its version is three minutes older, and the newest version wins.
        HttpResponse<byte[]> later = cluster.client(SLOW).put(key, bytes("from the slow clock, blind"), "1/1");
        assertThat(later.statusCode()).isEqualTo(201);

        assertThat(text(cluster.client(PLAIN).get(key, "1/1"))).isEqualTo("from the fast clock");
    }

    @Test
    void quorumsOverlapSoAWriteAfterAQuorumWriteAlwaysSawIt() {
        String key = "quorum";
        assertThat(cluster.client(FAST).put(key, bytes("first, fast"), "2/3").statusCode()).isEqualTo(201);
        // Any two quorums of three overlap: the read through the slow coordinator meets a replica of
        // the first write and takes in its version, so the slow node's write after it is newer.
        assertThat(text(cluster.client(SLOW).get(key, "2/3"))).isEqualTo("first, fast");
        assertThat(cluster.client(SLOW).put(key, bytes("second, slow"), "2/3").statusCode()).isEqualTo(201);

        for (int node = 0; node < 3; node++) {
            assertThat(text(cluster.client(node).get(key, "2/3"))).as("through node %d", node).isEqualTo("second, slow");
        }
    }

    /** A key whose one replica at 1/1 is node {@code owner}. */
    static String keyOwnedAloneBy(int owner, String prefix) {
        Topology topology = new Topology(cluster.nodeUrls().stream().sorted().toList(), cluster.replicaUrl(owner));
        for (int i = 0; ; i++) {
            String key = prefix + "-" + i;
            if (topology.replicasFor(key.getBytes(StandardCharsets.UTF_8), 1).getFirst().equals(cluster.replicaUrl(owner))) {
                return key;
            }
        }
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
