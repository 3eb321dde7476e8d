package dev.kvlab.heal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.TestStores;
import dev.kvlab.storage.Version;
import dev.kvlab.memory.MemoryBudget;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bucket hashes kept up to date as records change are the hashes a full scan computes, whatever
 * changed the records: writes (single and batched, newer and older versions), deletes, writes that
 * expire and their reaping, tombstone purges, concurrent writes while the hashes are brought up to
 * date, a topology change, too many changes for the bound, and a restart of the store.
 */
class MaintainedBucketHashesTest {

    static final int BUCKETS = 64;
    static final int KEYS = 3000;
    static final List<String> NODES = List.of("n0", "n1", "n2", "n3");
    static final MaintainedBucketHashes.Basis BASIS = new MaintainedBucketHashes.Basis(NODES, "n0", BUCKETS);
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    LocalStore store;
    HeaderScan scan;
    MaintainedBucketHashes hashes;
    final Random random = new Random(37);
    long clock = 1_000_000;

    @AfterEach
    void close() {
        if (hashes != null) {
            hashes.close();
        }
        if (store != null) {
            store.close();
        }
    }

    /** Hashes that read the changed keys however many there are, unless they overflow {@code maxChangedBytes}. */
    private void open(long maxChangedBytes) {
        open(maxChangedBytes, 0);
    }

    private void open(long maxChangedBytes, int scannedPerChangedKey) {
        store = LocalStore.open(TestStores.properties(dir));
        scan = new HeaderScan(store, Integer.MAX_VALUE);
        hashes = new MaintainedBucketHashes(store, scan, maxChangedBytes, scannedPerChangedKey);
    }

    @Test
    void hashesKeptUpToDateEqualAFullScanAfterEveryKindOfChange() throws Exception {
        open(16 << 20);
        randomWrites(KEYS);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).as("the first request builds the hashes in a full scan").isEqualTo(1);

        assertThat(answer(BASIS, "n1").recordsRead()).as("nothing changed: nothing read").isZero();

        for (int phase = 0; phase < 6; phase++) {
            randomWrites(500);
            deletes(100);
            purges(100);
            reap();
            assertSameAsFullScan(BASIS);
        }
        assertThat(hashes.rebuilds()).as("kept up to date without another full scan").isEqualTo(1);

        concurrentWritesWhileUpdating();
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).isEqualTo(1);

        MaintainedBucketHashes.Basis smaller = new MaintainedBucketHashes.Basis(List.of("n0", "n1", "n2"), "n0", BUCKETS);
        assertSameAsFullScan(smaller);
        assertThat(hashes.rebuilds()).as("another topology: built again").isEqualTo(2);
        randomWrites(300);
        purges(50);
        assertSameAsFullScan(smaller);
        assertSameAsFullScan(BASIS);
        randomWrites(300);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).isEqualTo(3);

        hashes.close();
        store.close();
        open(16 << 20);
        assertSameAsFullScan(BASIS);
        randomWrites(500);
        deletes(100);
        purges(100);
        reap();
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).as("after a restart: one full scan, then kept up to date").isEqualTo(1);
    }

    @Test
    void aWriteOnlyUpdateReadsTheChangedRecordsTwice() {
        open(16 << 20);
        randomWrites(1000);
        answer(BASIS, "n1");
        for (int i = 0; i < 10; i++) {
            store.write(key(i), value(++clock, 2)).block(WAIT);
        }
        assertThat(answer(BASIS, "n1").recordsRead()).as("10 keys, each at the old snapshot and the new").isEqualTo(20);
        assertThat(answer(BASIS, "n2").recordsRead()).isZero();
    }

    @Test
    void moreChangesThanTheBoundKeepsMeansAFullScanThatIsStillRight() {
        open(20 * (12 + 96)); // room for 20 keys
        randomWrites(1000);
        assertSameAsFullScan(BASIS);
        randomWrites(10);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).isEqualTo(1);
        randomWrites(500);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).as("the changes overflowed the bound").isEqualTo(2);
        randomWrites(10);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).isEqualTo(2);
    }

    @Test
    void whenRereadingTheChangesWouldCostMoreThanAScanTheHashesAreBuiltAgain() {
        open(16 << 20, MaintainedBucketHashes.SCANNED_PER_CHANGED_KEY);
        randomWrites(KEYS);
        assertSameAsFullScan(BASIS);
        randomWrites(10);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).as("a few changes: read again").isEqualTo(1);
        randomWrites(2000);
        assertSameAsFullScan(BASIS);
        assertThat(hashes.rebuilds()).as("about half the keys changed: scanned").isEqualTo(2);
    }

    @Test
    void keysLookedUpAtAnEarlierUpdateAnswerTheHeadersTheyHadThen() {
        open(16 << 20);
        randomWrites(KEYS);
        MaintainedBucketHashes.Answer first = hashes.hashes(BASIS, "n1", MaintainedBucketHashes.Ask.recentSince(0)).block(WAIT);
        Map<String, RecordHeader> then = headersNow();
        for (int update = 0; update < 5; update++) {
            randomWrites(200);
            deletes(50);
            answer(BASIS, "n2");
        }
        randomWrites(100);
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < KEYS + 10; i++) {
            keys.add(key(i));
        }
        MaintainedBucketHashes.Answer later = hashes.hashes(BASIS, "n1", new MaintainedBucketHashes.Ask(true, 0, keys, first.generation()))
                .block(WAIT);

        assertThat(later.generation()).isGreaterThan(first.generation());
        int changed = 0;
        for (MaintainedBucketHashes.Looked looked : later.looked()) {
            String key = new String(looked.key(), StandardCharsets.UTF_8);
            assertThat(looked.known()).as(key).isTrue();
            assertThat(looked.header()).as("%s as it was at the first update", key).isEqualTo(then.get(key));
            changed += java.util.Objects.equals(then.get(key), headersNow().get(key)) ? 0 : 1;
        }
        assertThat(changed).as("keys that changed since").isPositive();
        Map<String, RecordHeader> now = headersNow();
        assertThat(later.recent()).as("the keys changed recently, with their headers now").isNotEmpty()
                .allSatisfy(recent -> assertThat(recent.header()).isEqualTo(now.get(new String(recent.key(), StandardCharsets.UTF_8))));
    }

    @Test
    void theChangesAskedForAreThoseAfterTheUpdateNamedOrAllKeptForANumberFromBeforeARestart() {
        open(16 << 20);
        randomWrites(KEYS);
        answer(BASIS, "n1");
        for (int i = 0; i < 100; i++) {
            store.write(key(i), value(++clock, 1)).block(WAIT);
        }
        MaintainedBucketHashes.Answer first = hashes.hashes(BASIS, "n1", MaintainedBucketHashes.Ask.recentSince(0)).block(WAIT);
        for (int i = 100; i < 130; i++) {
            store.write(key(i), value(++clock, 1)).block(WAIT);
        }
        store.write(key(5), value(++clock, 1)).block(WAIT);

        MaintainedBucketHashes.Answer since = hashes.hashes(BASIS, "n1", MaintainedBucketHashes.Ask.recentSince(first.generation())).block(WAIT);
        assertThat(since.recent()).as("the keys changed after the first answer's update")
                .extracting(key -> new String(key.key(), StandardCharsets.UTF_8))
                .containsExactlyInAnyOrderElementsOf(java.util.stream.IntStream.concat(java.util.stream.IntStream.range(100, 130),
                        java.util.stream.IntStream.of(5)).mapToObj(i -> "key-" + i).toList());
        assertThat(hashes.hashes(BASIS, "n1", MaintainedBucketHashes.Ask.recentSince(since.generation())).block(WAIT).recent())
                .as("nothing changed since").isEmpty();
        assertThat(hashes.hashes(BASIS, "n1", MaintainedBucketHashes.Ask.recentSince(since.generation() + 1_000_000)).block(WAIT).recent())
                .as("a number this node never gave (a peer's from before a restart): every change kept").hasSizeGreaterThanOrEqualTo(130);
        assertThat(first.generation()).as("numbers start from the clock, above any from before a restart")
                .isGreaterThan(System.currentTimeMillis() - 600_000);
    }

    /**
     * Changes that came faster than the scan's rate are read again at least in half the time they
     * took to come: at the scan's rate of 200 keys a second, the 2 000 reads of the 1 000 keys
     * written here would take 10 s, as much again as under a steady write load of that rate they
     * would have taken to come, and the changes would pile up until every update read the store.
     */
    @Test
    void changesThatCameFasterThanTheScanRateAreReadAgainAsFastAsTheyCame() {
        store = LocalStore.open(TestStores.properties(dir));
        scan = new HeaderScan(store, 200);
        hashes = new MaintainedBucketHashes(store, scan, 16 << 20, 0);
        answer(BASIS, "n1");
        for (int i = 0; i < 1000; i++) {
            store.write(key(i), value(++clock, 1)).block(WAIT);
        }
        long started = System.nanoTime();
        answer(BASIS, "n1");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("an update after 1 000 changes, against 10 s at the scan's rate")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(hashes.rebuilds()).isEqualTo(1);
        assertSameAsFullScan(BASIS);
    }

    private Map<String, RecordHeader> headersNow() {
        Map<String, RecordHeader> headers = new java.util.HashMap<>();
        scan.all().toIterable().forEach(record -> headers.put(new String(record.key(), StandardCharsets.UTF_8), record.header()));
        return headers;
    }

    private MaintainedBucketHashes.Answer answer(MaintainedBucketHashes.Basis basis, String peer) {
        return hashes.hashes(basis, peer).block(WAIT);
    }

    private void assertSameAsFullScan(MaintainedBucketHashes.Basis basis) {
        for (String peer : basis.nodes()) {
            if (peer.equals(basis.self())) {
                continue;
            }
            long[] maintained = answer(basis, peer).hashes();
            long[] scanned = RepairRound.bucketHashes(new Ownership(basis.nodes()), basis.self(), peer, scan.all(), BUCKETS).block(WAIT);
            assertThat(maintained).as("the hashes shared with %s under %s", peer, basis.nodes()).isEqualTo(scanned);
        }
    }

    /** Writes of random keys: newer and older versions, values and tombstones, some expiring (some expired already). */
    private void randomWrites(int count) {
        List<StoreOp> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] key = key(random.nextInt(KEYS));
            long timestamp = random.nextInt(10) == 0 ? clock - random.nextInt(1000) : ++clock;
            int from = random.nextInt(NODES.size() + 1);
            Record record = switch (random.nextInt(5)) {
                case 0 -> Record.tombstone(new Version(timestamp, random.nextInt(4)), from);
                case 1 -> Record.expiringValue(new Version(timestamp, random.nextInt(4)), from,
                        System.currentTimeMillis() + (random.nextBoolean() ? -1000 : 1), new byte[Record.MAX_HEADER_BYTES + 3]);
                default -> value(timestamp, from);
            };
            if (random.nextBoolean()) {
                store.write(key, record).block(WAIT);
            } else {
                batch.add(new StoreOp.Write(key, record));
            }
        }
        if (!batch.isEmpty()) {
            store.batch(batch, new MemoryBudget(Long.MAX_VALUE).lease()).block(WAIT);
        }
    }

    private void deletes(int count) {
        for (int i = 0; i < count; i++) {
            store.write(key(random.nextInt(KEYS)), Record.tombstone(new Version(++clock, 1), random.nextInt(NODES.size() + 1))).block(WAIT);
        }
    }

    /** Purges of what the keys hold now, as the tombstone and ownership sweeps do. */
    private void purges(int count) {
        List<Entry> expected = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] key = key(random.nextInt(KEYS));
            Record record = store.onStorage(rocks -> java.util.Optional.ofNullable(rocks.get(key))).block(WAIT).orElse(null);
            if (record != null) {
                expected.add(new Entry(key, record));
            }
        }
        int deleted = store.onStorage(rocks -> rocks.deleteIfUnchanged(expected)).block(WAIT);
        assertThat(deleted).isPositive();
    }

    /** Reaps every expired record (with a short delay: the records expired by now). */
    private void reap() throws InterruptedException {
        Thread.sleep(5);
        store.onStorage(rocks -> rocks.reapExpired(System.currentTimeMillis(), 100_000)).block(WAIT);
    }

    /**
     * Batches of writes on two threads the whole time the hashes are brought up to date, again and
     * again: a batch notes its keys, then writes them, so a snapshot taken between the two would
     * see writes that no set of changes holds.
     */
    private void concurrentWritesWhileUpdating() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            Random own = new Random(w);
            writers.add(CompletableFuture.runAsync(() -> {
                MemoryBudget.Lease lease = new MemoryBudget(Long.MAX_VALUE).lease();
                while (!stop.get()) {
                    List<StoreOp> batch = new ArrayList<>();
                    for (int i = 0; i < 200; i++) {
                        long timestamp;
                        synchronized (this) {
                            timestamp = ++clock;
                        }
                        batch.add(new StoreOp.Write(key(own.nextInt(KEYS)),
                                own.nextInt(4) == 0 ? Record.tombstone(new Version(timestamp, 2), 3) : value(timestamp, 2)));
                    }
                    store.batch(batch, lease).block(WAIT);
                }
            }));
        }
        for (int i = 0; i < 100; i++) {
            answer(BASIS, "n" + (1 + i % 3));
        }
        stop.set(true);
        for (CompletableFuture<Void> writer : writers) {
            writer.get();
        }
    }

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static Record value(long timestamp, int from) {
        byte[] array = Record.newValueArray(5);
        System.arraycopy("value".getBytes(StandardCharsets.UTF_8), 0, array, Record.HEADER_BYTES, 5);
        return Record.value(new Version(timestamp, 1), from, array);
    }
}
