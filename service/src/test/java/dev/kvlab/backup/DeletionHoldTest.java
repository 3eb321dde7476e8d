package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.heal.Handoff;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * While a backup holds, handoff hands records to their owners but keeps its own copies: a record
 * moving during a backup is in one node's snapshot at least. Released, the copies go.
 */
class DeletionHoldTest {

    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void recordsHandedToTheirOwnersStayWhileABackupHoldsAndGoOnceItReleases() throws Exception {
        cluster = InProcessCluster.start(2, Map.of("kvlab.replication.timeout", "500ms", "kvlab.heal.handoff.interval", "1s",
                "kvlab.heal.handoff.settle", "100ms"));
        Handoff handoff = cluster.bean(1, Handoff.class);
        assertThat(handoff.holdDeletions("nightly", System.currentTimeMillis() + 60_000)).isNull();
        assertThat(handoff.holdDeletions("other", System.currentTimeMillis() + 60_000)).as("one backup holds at a time").isEqualTo("nightly");

        // Records on node 1 that node 0 alone owns (written at 1 replica), as a topology change leaves them.
        Ownership ownership = new Ownership(cluster.nodeUrls());
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < 20; i++) {
            String key = "moving-" + i;
            if (ownership.ownersOf(key.getBytes(StandardCharsets.UTF_8), 1).equals(List.of(cluster.nodeUrls().get(0)))) {
                keys.add(key);
            }
        }
        LocalStore store = cluster.bean(1, LocalStore.class);
        for (String key : keys) {
            byte[] value = Record.newValueArray(5);
            store.write(key.getBytes(StandardCharsets.UTF_8), Record.value(new Version(System.currentTimeMillis(), 2), 1, value)).block();
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> keys.stream().allMatch(key -> cluster.holders(key).contains(0)));
        long sweepsBefore = System.currentTimeMillis();
        await().atMost(Duration.ofSeconds(20)).until(() -> handoff.last() != null && handoff.last().startedMillis() > sweepsBefore);
        assertThat(handoff.moved()).as("records deleted while held").isZero();
        for (String key : keys) {
            assertThat(cluster.holders(key)).as(key).containsExactly(0, 1);
        }

        handoff.releaseDeletions("nightly");

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(handoff.moved()).isEqualTo(keys.size());
            for (String key : keys) {
                assertThat(cluster.holders(key)).as(key).containsExactly(0);
            }
        });
    }
}
