package dev.kvlab.it;

import static dev.kvlab.it.fixture.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvlabCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * API.md's invariants on three containers, with nodes stopped, paused and re-created. Every test
 * leaves all three nodes running.
 */
@Testcontainers
class ClusterScenariosIT {

    static final Duration TIMEOUT = Duration.ofSeconds(1);

    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3).withSetting("kvlab.replication.timeout", TIMEOUT.toMillis() + "ms");

    @AfterEach
    void everyNodeRunning() {
        cluster.startStoppedNodes();
    }

    @Test
    void quorumsHoldWithOneNodeDownAndFailWithTwo() {
        assertThat(cluster.client(0).put("quorums", "first", "3/3").statusCode()).isEqualTo(201);
        cluster.stopNode(2);

        assertThat(cluster.client(1).put("quorums", "second", "2/3").statusCode()).as("2/3 with one down").isEqualTo(201);
        assertThat(text(cluster.client(0).get("quorums", "2/3"))).isEqualTo("second");
        assertThat(text(cluster.client(0).get("quorums"))).as("default 2/3").isEqualTo("second");
        assertThat(cluster.client(0).get("quorums", "3/3").statusCode()).as("3/3 with one down").isEqualTo(504);
        assertThat(cluster.client(1).put("quorums-one", "x", "1/3").statusCode()).as("1/3").isEqualTo(201);

        cluster.stopNode(1);
        assertThat(cluster.client(0).put("quorums", "third", "2/3").statusCode()).as("2/3 with two down").isEqualTo(504);
        assertThat(cluster.client(0).get("quorums").statusCode()).as("default with two down").isEqualTo(504);
        assertThat(cluster.client(0).put("quorums", "fourth", "1/3").statusCode()).as("1/3 with two down").isEqualTo(201);
    }

    @Test
    void aPausedNodeMakesThreeOfThreeTimeOutWhileTwoOfThreeSucceed() {
        cluster.client(0).put("frozen", "before", "3/3");
        cluster.pauseNode(2);
        try {
            long started = System.nanoTime();
            HttpResponse<byte[]> all = cluster.client(0).put("frozen", "during", "3/3");
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertThat(all.statusCode()).isEqualTo(504);
            assertThat(took).as("504 comes with the replica timeout").isBetween(TIMEOUT.minusMillis(100), TIMEOUT.plusSeconds(2));

            assertThat(cluster.client(1).put("frozen", "quorum", "2/3").statusCode()).isEqualTo(201);
            assertThat(text(cluster.client(0).get("frozen", "2/3"))).isEqualTo("quorum");
            assertThat(cluster.client(1).get("frozen", "3/3").statusCode()).isEqualTo(504);
        } finally {
            cluster.unpauseNode(2);
        }
        assertThat(text(cluster.client(2).get("frozen", "3/3"))).as("after unpausing").isEqualTo("quorum");
    }

    @Test
    void aClusterRangeReadsEveryKeyWithANodeDown() {
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String key = String.format("range-%02d", i);
            assertThat(cluster.client(i % 3).put(key, "v" + i, "2/3").statusCode()).isEqualTo(201);
            expected.add(key);
        }
        cluster.client(1).delete("range-13", "3/3");
        expected.remove("range-13");
        cluster.stopNode(1);

        HttpResponse<byte[]> range = cluster.client(2).range("range-", "range-~");

        assertThat(range.statusCode()).isEqualTo(200);
        // Entries are "<key>\n<value>" back to back; the keys are the words before a newline.
        List<String> keys = Pattern.compile("range-\\d\\d(?=\n)").matcher(new String(range.body(), StandardCharsets.UTF_8))
                .results().map(MatchResult::group).toList();
        assertThat(keys).containsExactlyElementsOf(expected);
    }

    @Test
    void dataSurvivesReCreatingAContainerOnItsVolume() {
        assertThat(cluster.client(0).put("durable", "kept", "3/3").statusCode()).isEqualTo(201);

        cluster.recreateNode(2);
        cluster.stopNode(0);
        cluster.stopNode(1);

        // 1/3 through node 2 with its peers down: the only answer is node 2's own replica.
        assertThat(text(cluster.client(2).get("durable", "1/3"))).isEqualTo("kept");
    }
}
