package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.text;
import static dev.kvlab.storage.TestStores.tombstone;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

class RocksStoreTest {

    @TempDir
    Path dir;

    RocksStore store;

    @BeforeEach
    void open() {
        store = RocksStore.open(TestStores.properties(dir));
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void aMissingKeyHasNoRecord() {
        assertThat(store.get(bytes("nope"))).isNull();
    }

    @Test
    void aNewerVersionReplacesTheValue() {
        store.write(bytes("k"), value(1, "one"));
        store.write(bytes("k"), value(2, "two"));

        assertThat(text(store.get(bytes("k")))).isEqualTo("two");
    }

    @Test
    void anOlderVersionArrivingLateDoesNotWin() {
        store.write(bytes("k"), value(5, "new"));

        store.write(bytes("k"), value(4, "old"));

        assertThat(text(store.get(bytes("k")))).isEqualTo("new");
        assertThat(store.get(bytes("k")).version().timestamp()).isEqualTo(5);
    }

    @Test
    void aVersionFromANodeWithANegativeIdOrdersByItsId() {
        Record fromNegative = Record.tombstone(new Version(7, -3));
        Record fromPositive = TestStores.value(new Version(7, 2), "later node");

        store.write(bytes("k"), fromPositive);
        store.write(bytes("k"), fromNegative);
        store.write(bytes("j"), fromNegative);
        store.write(bytes("j"), fromPositive);

        assertThat(text(store.get(bytes("k")))).isEqualTo("later node");
        assertThat(text(store.get(bytes("j")))).isEqualTo("later node");
    }

    @Test
    void writesInAnyOrderEndOnTheNewestThroughFlushesCompactionsAndReopening() throws Exception {
        List<Long> versions = new ArrayList<>(LongStream.rangeClosed(1, 200).boxed().toList());
        Collections.shuffle(versions, new Random(42));
        for (int i = 0; i < versions.size(); i++) {
            long version = versions.get(i);
            store.write(bytes("k"), version % 3 == 0 ? tombstone(version) : value(version, "v" + version));
            if (i % 50 == 49) {
                // Some merges land in SST files, the rest stay in the memtable and the WAL.
                store.flush();
            }
        }
        assertThat(text(store.get(bytes("k")))).isEqualTo("v200");

        store.close();
        store = RocksStore.open(TestStores.properties(dir));
        assertThat(text(store.get(bytes("k")))).isEqualTo("v200");
        store.compact();
        assertThat(text(store.get(bytes("k")))).isEqualTo("v200");
        assertThat(store.get(bytes("k")).version().timestamp()).isEqualTo(200);
        try (RangeCursor cursor = store.range(bytes("k"), null)) {
            assertThat(text(cursor.next().record())).isEqualTo("v200");
        }
    }

    @Test
    void aDeleteIsAVersionedTombstone() {
        store.write(bytes("k"), value(1, "v"));
        store.write(bytes("k"), tombstone(2));

        Record record = store.get(bytes("k"));
        assertThat(record.isTombstone()).isTrue();
        assertThat(record.version().timestamp()).isEqualTo(2);
    }

    @Test
    void anOlderValueDoesNotResurrectADeletedKey() {
        store.write(bytes("k"), tombstone(10));

        store.write(bytes("k"), value(9, "zombie"));

        assertThat(store.get(bytes("k")).isTombstone()).isTrue();
    }

    @Test
    void aNewerValueRecreatesADeletedKey() {
        store.write(bytes("k"), value(1, "first"));
        store.write(bytes("k"), tombstone(2));
        store.write(bytes("k"), value(3, "again"));

        assertThat(text(store.get(bytes("k")))).isEqualTo("again");
    }

    @Test
    void rangesAreOrderedByUnsignedBytesWithNonAsciiKeys() {
        // UTF-8: "z" is 0x7A, "é" starts with 0xC3, "я" with 0xD1, "€" with 0xE2, and 0xFF is the largest byte.
        List<byte[]> keys = List.of(bytes("a"), bytes("z"), bytes("é"), bytes("я"), bytes("€"), new byte[] {(byte) 0xFF});
        for (byte[] key : keys.reversed()) {
            store.write(key, value(1, "v"));
        }

        assertThat(scan(bytes("a"), null)).containsExactly(keys.toArray(byte[][]::new));
        assertThat(scan(bytes("b"), bytes("я"))).containsExactly(bytes("z"), bytes("é"));
    }

    @Test
    void aRangeIncludesItsStartAndExcludesItsEnd() {
        for (String key : List.of("k1", "k2", "k3", "k4")) {
            store.write(bytes(key), value(1, key));
        }

        assertThat(scan(bytes("k2"), bytes("k4"))).containsExactly(bytes("k2"), bytes("k3"));
        assertThat(scan(bytes("k3"), null)).containsExactly(bytes("k3"), bytes("k4"));
        assertThat(scan(bytes("k5"), null)).isEmpty();
    }

    @Test
    void aRangeYieldsTombstonesForTheCoordinatorToResolve() {
        store.write(bytes("a"), value(1, "v"));
        store.write(bytes("b"), tombstone(1));

        try (RangeCursor cursor = store.range(bytes("a"), null)) {
            assertThat(cursor.next().record().isTombstone()).isFalse();
            assertThat(cursor.next().record().isTombstone()).isTrue();
            assertThat(cursor.hasNext()).isFalse();
        }
    }

    @Test
    void aClosedCursorReportsTheEndInsteadOfTouchingFreedMemory() {
        store.write(bytes("a"), value(1, "v"));
        RangeCursor cursor = store.range(bytes("a"), null);

        cursor.close();

        assertThat(cursor.hasNext()).isFalse();
    }

    @Test
    void aReadFromMemoryAnswersFromTheMemtable() {
        store.write(bytes("fresh"), value(3, "in the memtable"));

        MemoryRead read = store.readFromMemory(bytes("fresh"));

        assertThat(read.answered()).isTrue();
        assertThat(text(read.record())).isEqualTo("in the memtable");
        assertThat(read.record().version().timestamp()).isEqualTo(3);
    }

    @Test
    void aReadFromMemoryKnowsAKeyIsAbsentWithoutAFile() {
        assertThat(store.readFromMemory(bytes("never written"))).isEqualTo(new MemoryRead(true, null));
    }

    @Test
    void aReadFromMemoryOfAKeyOnlyInAFileIsAMissUntilAReadCachesItsBlock() {
        store.write(bytes("on disk"), value(5, "in an SST file"));
        store.flush();
        store.close();
        store = RocksStore.open(TestStores.properties(dir)); // an empty block cache

        assertThat(store.readFromMemory(bytes("on disk")).answered()).isFalse();
        assertThat(text(store.get(bytes("on disk")))).isEqualTo("in an SST file");
        MemoryRead cached = store.readFromMemory(bytes("on disk"));
        assertThat(cached.answered()).isTrue();
        assertThat(text(cached.record())).isEqualTo("in an SST file");
        assertThat(store.blockCacheCounts().dataMisses()).isPositive();
        assertThat(store.blockCacheCounts().dataHits()).isPositive();
    }

    @Test
    void aReadFromMemoryOfDataLargerThanTheCacheIsRightOrAMissNeverAPartialRecord() {
        // 16 MB of records through an 8 MB cache: partitioned index blocks and data blocks are
        // evicted, and lookups find some pieces cached and others not.
        int keys = 16_000;
        for (int i = 0; i < keys; i++) {
            store.write(bytes(String.format("key%06d", i)), value(1, String.format("%06d", i) + "x".repeat(1000)));
        }
        store.flush();
        store.close();
        store = RocksStore.open(TestStores.properties(dir));
        java.util.Random random = new java.util.Random(42);
        int answered = 0;
        for (int n = 0; n < 4_000; n++) {
            int i = random.nextInt(keys);
            byte[] key = bytes(String.format("key%06d", i));
            MemoryRead read = store.readFromMemory(key);
            if (read.answered()) {
                answered++;
                assertThat(text(read.record())).as("key %d from memory", i).startsWith(String.format("%06d", i));
            } else {
                assertThat(text(store.get(key))).startsWith(String.format("%06d", i));
            }
            assertThat(store.readFromMemory(bytes(String.format("absent%06d", i))).record()).isNull();
        }
        assertThat(answered).as("reads answered from the cache").isPositive();
    }

    @Test
    void aNewerVersionInTheMemtableOverAnOlderOneInAFileIsReadWhole() {
        store.write(bytes("k"), value(1, "old, in a file"));
        store.flush();
        store.close();
        store = RocksStore.open(TestStores.properties(dir));
        store.write(bytes("k"), value(2, "new, in the memtable"));

        // The memtable holds a merge operand only: the file's value is needed to fold it.
        assertThat(store.readFromMemory(bytes("k")).answered()).isFalse();
        assertThat(text(store.get(bytes("k")))).isEqualTo("new, in the memtable");
        assertThat(text(store.readFromMemory(bytes("k")).record())).isEqualTo("new, in the memtable");
    }

    @Test
    void aClosedStoreAnswersNoReadFromMemory() {
        store.write(bytes("k"), value(1, "v"));
        store.close();

        assertThat(store.readFromMemory(bytes("k")).answered()).isFalse();
    }

    @Test
    void dataSurvivesReopening() {
        store.write(bytes("kept"), value(7, "value"));
        store.write(bytes("gone"), tombstone(8));
        store.close();

        store = RocksStore.open(TestStores.properties(dir));

        assertThat(text(store.get(bytes("kept")))).isEqualTo("value");
        assertThat(store.get(bytes("kept")).version().timestamp()).isEqualTo(7);
        assertThat(store.get(bytes("gone")).isTombstone()).isTrue();
    }

    @Test
    void aStoreOfTheFirstLayoutIsMovedToTheCurrentOneWhenOpened() throws Exception {
        store.close();
        Path old = dir.resolve("first-layout");
        try (Options options = new Options().setCreateIfMissing(true); RocksDB db = RocksDB.open(options, old.toString())) {
            db.put(bytes("kept"), firstLayout((byte) 0, 7L << 16, -5, "value"));
            db.put(bytes("gone"), firstLayout((byte) 1, 8L << 16, 3, ""));
            for (int i = 0; i < 2500; i++) {
                db.put(bytes(String.format("many%04d", i)), firstLayout((byte) 0, 1, 1, "v" + i));
            }
        }

        store = RocksStore.open(TestStores.properties(old));

        Record kept = store.get(bytes("kept"));
        assertThat(text(kept)).isEqualTo("value");
        assertThat(kept.version()).isEqualTo(new Version(7L << 16, -5));
        assertThat(store.get(bytes("gone")).isTombstone()).isTrue();
        assertThat(store.get(bytes("gone")).version()).isEqualTo(new Version(8L << 16, 3));
        assertThat(text(store.get(bytes("many2499")))).isEqualTo("v2499");
        assertThat(scan(bytes("many"), bytes("manz"))).hasSize(2500);
        // Moved records take part in versioning like any other.
        store.write(bytes("kept"), value(new Version(7L << 16, -6), "older"));
        assertThat(text(store.get(bytes("kept")))).isEqualTo("value");

        store.close();
        store = RocksStore.open(TestStores.properties(old));
        assertThat(text(store.get(bytes("kept")))).isEqualTo("value");
        assertThat(scan(bytes("a"), null)).hasSize(2502);
    }

    @Test
    void aCorruptRecordOfTheFirstLayoutStopsTheOpenWithAClearError() throws Exception {
        store.close();
        Path old = dir.resolve("first-layout");
        try (Options options = new Options().setCreateIfMissing(true); RocksDB db = RocksDB.open(options, old.toString())) {
            db.put(bytes("bad"), bytes("short"));
        }

        assertThatThrownBy(() -> RocksStore.open(TestStores.properties(old)))
                .isInstanceOf(StorageException.class)
                .hasMessageContaining("first storage layout")
                .hasMessageContaining("corrupt");
        store = RocksStore.open(TestStores.properties(dir));
    }

    /** A record as kvlab stored it first: {@code [flags:1][timestamp:8][node:4][value]}. */
    private static byte[] firstLayout(byte flags, long timestamp, int node, String value) {
        byte[] bytes = bytes(value);
        return ByteBuffer.allocate(13 + bytes.length).put(flags).putLong(timestamp).putInt(node).put(bytes).array();
    }

    @Test
    void closingTheStoreClosesItsOpenCursors() {
        store.write(bytes("a"), value(1, "v"));
        RangeCursor cursor = store.range(bytes("a"), null);

        store.close();

        assertThat(cursor.hasNext()).isFalse();
        assertThatThrownBy(() -> store.get(bytes("a"))).isInstanceOf(StorageException.class).hasMessageContaining("closed");
    }

    @Test
    void concurrentWritesToOneKeyEndOnTheNewestVersion() throws Exception {
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int offset = t;
            writers.add(Thread.ofPlatform().start(() -> {
                for (int i = offset; i < 2000; i += 4) {
                    store.write(bytes("hot"), value(i, Integer.toString(i)));
                }
            }));
        }
        for (Thread writer : writers) {
            writer.join();
        }

        assertThat(text(store.get(bytes("hot")))).isEqualTo("1999");
    }

    @Test
    void flushesRunNicedBesideTheRequests() throws Exception {
        Path tasks = Path.of("/proc/self/task");
        assumeTrue(Files.isDirectory(tasks), "needs Linux's /proc");
        // 8 MiB of values through a 4 MiB write buffer: RocksDB flushes at least once.
        String value = "v".repeat(1024);
        for (int i = 0; i < 8 * 1024; i++) {
            store.write(bytes("key" + i), value(1, value));
        }

        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<Integer> flushThreadNices = niceOfThreadsNamed(tasks, "rocksdb:high");
        while (!flushThreadNices.contains(19) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            flushThreadNices = niceOfThreadsNamed(tasks, "rocksdb:high");
        }
        assertThat(flushThreadNices).contains(19);
    }

    /** The nice values of this process's threads with that name, from /proc/self/task/<tid>/stat. */
    private static List<Integer> niceOfThreadsNamed(Path tasks, String name) throws IOException {
        List<Integer> nices = new ArrayList<>();
        try (Stream<Path> threads = Files.list(tasks)) {
            for (Path thread : threads.toList()) {
                String stat;
                try {
                    stat = Files.readString(thread.resolve("stat"));
                } catch (NoSuchFileException gone) {
                    continue;
                }
                String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (comm.equals(name)) {
                    // After the command: state, then 15 more fields; nice is the 17th.
                    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    nices.add(Integer.parseInt(fields[16]));
                }
            }
        }
        return nices;
    }

    private List<byte[]> scan(byte[] start, byte[] end) {
        List<byte[]> keys = new ArrayList<>();
        try (RangeCursor cursor = store.range(start, end)) {
            cursor.forEachRemaining(entry -> keys.add(entry.key()));
        }
        return keys;
    }
}
