package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.cluster.Topology;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A round that compares differing buckets by the keys changed on either side since the hashes were
 * last brought up to date ({@link ChangedKeyComparison}) repairs exactly what a scan of every record
 * would: after random writes, deletes and expiring writes on either side, stored straight into
 * each node's store as a replica that missed the other's writes would hold them, both nodes hold
 * the same records, having read only the changed keys; and when more keys changed than the node
 * keeps, the buckets the changes kept cannot explain are scanned, and the result is the same.
 */
class RepairByChangedKeysTest {

    static final int KEYS = 400;
    static final Duration WAIT = Duration.ofSeconds(60);
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aRoundOverTheChangedKeysRepairsWhatAScanWould() throws Exception {
        // Rounds only when the test asks: a node's own round, at start or retried after one that failed
        // while its peers were starting, would copy the differing records before the one measured.
        cluster = InProcessCluster.start(3, RepairTest.settings("kvlab.heal.repair.enabled", "false"));
        fill();
        RepairService repair = cluster.bean(0, RepairService.class);
        Topology topology = cluster.bean(0, TopologyHistory.class).current();
        String peer = cluster.replicaUrl(1);
        assertThat(repair.round(topology, peer).block(WAIT).bucketsDiffering()).as("in sync after the fill").isZero();

        // 50 changes: few enough for the hashes to follow them rather than scan (MaintainedBucketHashes#cheaperThanAScan).
        int differing = diverge(new Random(37), 50);
        Thread.sleep(700); // older than the round's start by the replicas' timeout: covered by it
        long peerReadBefore = cluster.bean(1, RepairService.class).recordsRead();
        PeerRepair.Round round = repair.round(topology, peer).block(WAIT);

        assertThat(round.complete()).as(round.toString()).isTrue();
        assertThat(round.bucketsDiffering()).as(round.toString()).isPositive();
        assertThat(round.bucketsByChangedKeys()).as("every differing bucket explained by the changed keys: " + round)
                .isEqualTo(round.bucketsDiffering());
        assertThat(round.recordsSent() + round.recordsReceived()).as("records copied: one per key that differs").isEqualTo(differing);
        assertThat(round.recordsRead()).as("records this node read: the changed keys, not the store").isLessThan(KEYS);
        assertThat(cluster.bean(1, RepairService.class).recordsRead() - peerReadBefore).as("records the peer read").isLessThan(KEYS);
        assertThat(headers(1)).as("node 1's records after the round").isEqualTo(headers(0));
        assertThat(repair.round(topology, peer).block(WAIT).bucketsDiffering()).as("in sync after the round").isZero();
    }

    @Test
    void bucketsTheKeptChangesCannotExplainAreScanned() throws Exception {
        // Recent changes kept: 64 KB, about 300 keys; 400 change on node 0, 40 between two updates of its hashes.
        cluster = InProcessCluster.start(3, RepairTest.settings("kvlab.heal.repair.enabled", "false",
                "kvlab.heal.repair.changed-keys-memory", "64KB"));
        fill();
        RepairService repair = cluster.bean(0, RepairService.class);
        Topology topology = cluster.bean(0, TopologyHistory.class).current();
        String peer = cluster.replicaUrl(1);
        assertThat(repair.round(topology, peer).block(WAIT).bucketsDiffering()).isZero();

        LocalStore store = cluster.bean(0, LocalStore.class);
        long wall = System.currentTimeMillis();
        for (int i = 0; i < 400; i++) {
            store.write(key("extra-" + i), value(wall, i, "only on node 0")).block(WAIT);
            if (i % 40 == 39) {
                repair.round(topology, cluster.replicaUrl(2)).block(WAIT); // brings node 0's hashes up to date
            }
        }
        Thread.sleep(700);
        PeerRepair.Round round = repair.round(topology, peer).block(WAIT);

        assertThat(round.complete()).as(round.toString()).isTrue();
        assertThat(round.recordsSent()).isEqualTo(400);
        assertThat(round.bucketsByChangedKeys()).as("some buckets explained, the rest scanned: " + round)
                .isPositive().isLessThan(round.bucketsDiffering());
        assertThat(headers(1)).isEqualTo(headers(0));
    }

    private void fill() {
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 3).put("key-" + i, bytes("value " + i), "3/3").statusCode()).isEqualTo(201);
        }
    }

    /**
     * Random changes of the filled keys and new ones on node 0, node 1 or both, as replicas that
     * missed each other's writes hold them; how many keys then differ between the two.
     */
    private int diverge(Random random, int changes) {
        LocalStore[] stores = {cluster.bean(0, LocalStore.class), cluster.bean(1, LocalStore.class)};
        long wall = System.currentTimeMillis();
        int differing = 0;
        for (int i = 0; i < changes; i++) {
            byte[] key = key(random.nextInt(3) == 0 ? "new-" + i : "key-" + random.nextInt(KEYS));
            boolean both = random.nextInt(5) == 0;
            int side = random.nextInt(2);
            Record record = switch (random.nextInt(4)) {
                case 0 -> value(wall, i, "changed " + i);
                case 1 -> Record.tombstone(version(wall, i), 3);
                case 2 -> expiring(wall, i, wall - 1_000); // expired already
                default -> expiring(wall, i, wall + 3_600_000);
            };
            stores[side].write(key, record).block(WAIT);
            if (both) {
                stores[1 - side].write(key, record).block(WAIT);
            }
        }
        Map<String, RecordHeader> zero = headers(0);
        Map<String, RecordHeader> one = headers(1);
        for (String key : zero.keySet()) {
            if (!zero.get(key).equals(one.get(key))) {
                differing++;
            }
        }
        for (String key : one.keySet()) {
            if (!zero.containsKey(key)) {
                differing++;
            }
        }
        return differing;
    }

    /** Each change a version of its own, newer than the fill's. */
    private static Version version(long wall, int change) {
        return new Version((wall << 16) + change, change % 4);
    }

    private static Record value(long wall, int change, String text) {
        byte[] value = text.getBytes(StandardCharsets.UTF_8);
        byte[] array = new byte[Record.HEADER_BYTES + value.length];
        System.arraycopy(value, 0, array, Record.HEADER_BYTES, value.length);
        return Record.value(version(wall, change), 3, array);
    }

    private static Record expiring(long wall, int change, long expiresAt) {
        byte[] array = new byte[Record.MAX_HEADER_BYTES + 5];
        return Record.expiringValue(version(wall, change), 3, expiresAt, array);
    }

    private static byte[] key(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /** Node {@code node}'s records, as versions and expiries by key (whether reaped yet or not aside). */
    private Map<String, RecordHeader> headers(int node) {
        Map<String, RecordHeader> headers = new TreeMap<>();
        new HeaderScan(cluster.bean(node, LocalStore.class), 10_000_000).all().toIterable().forEach(record -> headers.put(
                new String(record.key(), StandardCharsets.UTF_8),
                new RecordHeader(record.header().version(), record.header().from(), record.header().tombstone() && !record.header().expires(),
                        record.header().expiresAtMillis())));
        return headers;
    }
}
