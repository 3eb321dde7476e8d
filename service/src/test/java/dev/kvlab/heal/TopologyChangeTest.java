package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Records follow the topology: after the static node list grows from 3 to 4 and shrinks back
 * (the leaving node handing its records over first, and the others' sweeps not undoing it), every
 * key reads back at the replicas it was written with, during the move and after it, and each ends
 * on exactly its owners. A leaving node that stops hands over the writes it took after its last
 * pass too.
 */
class TopologyChangeTest {

    static final int KEYS = 300;
    static final String[] REPLICAS = {"1/1", "2/2", "2/3", "3/3"};
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void keysReachTheirNewOwnersWhenANodeJoinsAndWhenOneLeaves() throws Exception {
        cluster = InProcessCluster.startResizable(3, 4, Map.of("kvlab.replication.timeout", "500ms",
                "kvlab.heal.repair.interval", "1s", "kvlab.heal.handoff.settle", "500ms"));
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 3).put(key(i), bytes("value " + i), replicas(i)).statusCode()).isEqualTo(201);
        }

        cluster.resize(4);
        // At once, before the records have moved: a read at the key's replicas finds it.
        everyKeyReadsBack();
        await().atMost(Duration.ofSeconds(40)).untilAsserted(this::everyKeyOnExactlyItsOwners);
        assertThat(List.of(0, 1, 2).stream().mapToLong(node -> cluster.bean(node, Handoff.class).moved()).sum())
                .as("records moved away from the nodes that no longer own them").isPositive();
        everyKeyReadsBack();

        // Node 3 leaves: it hands its records to the three that stay, then the list shrinks.
        KvClient management = cluster.management(3);
        var leave = management.send("POST", "/actuator/kvlab/leave", HttpRequest.BodyPublishers.ofString("{}"), "Content-Type", "application/json",
                "Authorization", "Bearer " + cluster.secret());
        assertThat(leave.statusCode()).as(text(leave)).isEqualTo(200);
        await().atMost(Duration.ofSeconds(40)).until(() -> {
            Leave leaving = cluster.bean(3, Handoff.class).leaving();
            return leaving != null && leaving.passes() > 0 && leaving.lastPass().failed() == 0;
        });
        // It makes no more passes, as if it stopped now. The others still reckon it an owner: a
        // sweep of theirs (every kvlab.heal.handoff.interval) now would send it the records it
        // handed them and delete their copies once it took them, and records it alone owned
        // before would leave with it. It takes no copy back of what it holds, so they keep theirs.
        cluster.bean(3, Handoff.class).close();
        for (int node = 0; node < 3; node++) {
            TopologyHistory topology = cluster.bean(node, TopologyHistory.class);
            Sweep sweep = cluster.bean(node, Handoff.class).sweep(topology.current(), topology.current().ownership(), false).block();
            assertThat(sweep.movedAway()).as("records node %d moved to the leaving node", node).isZero();
        }
        cluster.resize(3);
        everyKeyReadsBack();
        await().atMost(Duration.ofSeconds(40)).untilAsserted(this::everyKeyOnExactlyItsOwners);
    }

    @Test
    void aLeavingNodeHandsOverAsItStopsWhatItTookAfterItsLastPass() throws Exception {
        cluster = InProcessCluster.start(4, Map.of("kvlab.replication.timeout", "500ms"));
        var leave = cluster.management(3).send("POST", "/actuator/kvlab/leave", HttpRequest.BodyPublishers.ofString("{}"),
                "Content-Type", "application/json", "Authorization", "Bearer " + cluster.secret());
        assertThat(leave.statusCode()).as(text(leave)).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            Leave leaving = cluster.bean(3, Handoff.class).leaving();
            return leaving != null && leaving.passes() > 0 && leaving.lastPass().failed() == 0;
        });

        // Keys that node 3 alone owns at 1/1 among the four, written through node 0 after a pass,
        // and node 3 stopped at once: passes come a second apart, so most of them no pass has sent.
        Ownership four = new Ownership(cluster.nodeUrls());
        Ownership three = new Ownership(cluster.nodeUrls().subList(0, 3));
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < 50; i++) {
            String key = "late-" + i;
            if (four.ownersOf(key.getBytes(StandardCharsets.UTF_8), 1).equals(List.of(cluster.replicaUrl(3)))) {
                keys.add(key);
            }
        }
        for (String key : keys) {
            assertThat(cluster.client(0).put(key, bytes(key), "1/1").statusCode()).isEqualTo(201);
        }
        cluster.stopNode(3);

        for (String key : keys) {
            int owner = cluster.nodeUrls().indexOf(three.ownersOf(key.getBytes(StandardCharsets.UTF_8), 1).getFirst());
            assertThat(cluster.holders(key)).as("the nodes that hold %s, written to node 3 at 1/1 after its last pass", key).contains(owner);
        }
    }

    /**
     * A write acknowledged before the list grew may be held by a node that no longer owns the key
     * while the key's new owners still hold an older version: a read must answer the newer record,
     * not the quorum of new owners' older one. Handoff is held off so nothing moves meanwhile.
     */
    @Test
    void aReadAfterTheListChangedAnswersTheNewerRecordThatHasNotMovedYet() throws Exception {
        cluster = InProcessCluster.startResizable(3, 4, Map.of("kvlab.replication.timeout", "500ms",
                "kvlab.heal.handoff.settle", "10m", "kvlab.heal.repair.interval", "10m"));
        List<String> three = cluster.nodeUrls();
        List<String> four = new ArrayList<>(three);
        four.add(cluster.replicaUrl(3));
        String key = null;
        int formerOwner = -1;
        for (int i = 0; key == null; i++) {
            List<String> owners = new Ownership(four).ownersOf(("moving-" + i).getBytes(StandardCharsets.UTF_8), 3);
            for (int node = 0; node < 3; node++) {
                if (!owners.contains(three.get(node))) {
                    key = "moving-" + i;
                    formerOwner = node;
                }
            }
        }
        assertThat(cluster.client(0).put(key, bytes("older"), "3/3").statusCode()).isEqualTo(201);

        cluster.resize(4);
        // The newer write reached only the node that no longer owns the key, as when the list
        // changed before the write reached the others.
        byte[] newer = "newer".getBytes(StandardCharsets.UTF_8);
        byte[] array = Record.newValueArray(newer.length);
        System.arraycopy(newer, 0, array, Record.HEADER_BYTES, newer.length);
        Record record = Record.value(cluster.bean(formerOwner, HybridLogicalClock.class).now(), 3, array);
        cluster.bean(formerOwner, LocalStore.class).write(key.getBytes(StandardCharsets.UTF_8), record).block();

        for (int node = 0; node < 4; node++) {
            var read = cluster.client(node).get(key, "2/3");
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(text(read)).as("%s read through node %d", key, node).isEqualTo("newer");
        }
    }

    private void everyKeyReadsBack() {
        for (int i = 0; i < KEYS; i++) {
            var read = cluster.client(i % cluster.size()).get(key(i), readReplicas(i));
            assertThat(read.statusCode()).as("%s read at %s", key(i), readReplicas(i)).isEqualTo(200);
            assertThat(text(read)).isEqualTo("value " + i);
        }
    }

    private void everyKeyOnExactlyItsOwners() {
        Ownership ownership = new Ownership(cluster.nodeUrls());
        for (int i = 0; i < KEYS; i++) {
            List<Integer> owners = new ArrayList<>();
            for (String owner : ownership.ownersOf(key(i).getBytes(StandardCharsets.UTF_8), from(i))) {
                owners.add(cluster.nodeUrls().indexOf(owner));
            }
            assertThat(cluster.holders(key(i))).as("%s written at %s", key(i), replicas(i)).containsExactlyInAnyOrderElementsOf(owners);
        }
    }

    static String key(int i) {
        return "key-" + i;
    }

    static String replicas(int i) {
        return REPLICAS[i % REPLICAS.length];
    }

    static int from(int i) {
        return Integer.parseInt(replicas(i).substring(2));
    }

    /** A read at the {@code from} of the write, one answer enough. */
    static String readReplicas(int i) {
        return "1/" + from(i);
    }
}
