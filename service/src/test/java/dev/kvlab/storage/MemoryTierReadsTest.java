package dev.kvlab.storage;

import static dev.kvlab.storage.LocalStoreTest.UNLIMITED;
import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reads answer the same whether they ask RocksDB's memory first or skip it ({@link MemoryTierChoice}). */
class MemoryTierReadsTest {

    /** Every read asks memory first. */
    static final StorageProperties.MemoryReads ALWAYS = new StorageProperties.MemoryReads(false, 0.25, 128, 16);
    /** One miss in a window of one stops the attempts; probes are too rare to matter here. */
    static final StorageProperties.MemoryReads SKIP_AFTER_A_MISS = new StorageProperties.MemoryReads(true, 1.0, 1, 1_000_000);

    static final List<String> KEYS = List.of("value", "tombstone", "expired", "expiring", "absent", "fresh");

    /** One clock for both stores, so that they hold the same bytes. */
    static final long NOW = System.currentTimeMillis();

    @TempDir
    Path asking;
    @TempDir
    Path skipping;

    @Test
    void readsThatSkipMemoryAnswerExactlyAsReadsThatAskIt() {
        List<String> asked = readAll(asking, ALWAYS, false);
        List<String> skipped = readAll(skipping, SKIP_AFTER_A_MISS, true);

        assertThat(skipped).isEqualTo(asked);
        assertThat(asked).contains("absent: none").anyMatch(read -> read.startsWith("expired: "));
    }

    @Test
    void whileSkippingEvenARecordInTheMemtableIsReadOnAStorageThread() {
        try (LocalStore store = coldStore(skipping, SKIP_AFTER_A_MISS)) {
            store.get(bytes("value"), UNLIMITED.lease()).block(); // needs a file: a miss
            store.write(bytes("hot"), value(9, "in the memtable")).block();
            AtomicReference<String> thread = new AtomicReference<>();

            Record record = store.get(bytes("hot"), UNLIMITED.lease())
                    .doOnNext(found -> thread.set(Thread.currentThread().getName())).block();

            assertThat(TestStores.text(record)).isEqualTo("in the memtable");
            assertThat(thread.get()).startsWith("kvlab-storage-");
            assertThat(store.memoryTierSkipping()).isTrue();
            assertThat(store.memoryTierSkipped()).isEqualTo(1);
        }
    }

    @Test
    void aClosedStoreFailsAReadTheSameWayEitherWay() {
        Throwable asked = closedRead(asking, ALWAYS);
        Throwable skipped = closedRead(skipping, SKIP_AFTER_A_MISS);

        assertThat(asked).isNotNull();
        assertThat(skipped).isNotNull().hasSameClassAs(asked);
    }

    /** Each key's record as read through a store whose files are not in its cache, in key order. */
    private static List<String> readAll(Path dir, StorageProperties.MemoryReads memoryReads, boolean expectSkipping) {
        List<String> reads = new ArrayList<>();
        try (LocalStore store = coldStore(dir, memoryReads)) {
            store.write(bytes("fresh"), value(7, "in the memtable")).block();
            for (int round = 0; round < 3; round++) {
                for (String key : KEYS) {
                    Record record = store.get(bytes(key), UNLIMITED.lease()).block();
                    reads.add(key + ": " + (record == null ? "none" : record.header() + " " + java.util.HexFormat.of().formatHex(record.encoded())));
                }
            }
            assertThat(store.memoryTierSkipping()).isEqualTo(expectSkipping);
            assertThat(store.memoryTierSkipped() > 0).isEqualTo(expectSkipping);
        }
        return reads;
    }

    /** A store holding a value, a tombstone, an expired and an expiring record in a file, opened afresh. */
    private static LocalStore coldStore(Path dir, StorageProperties.MemoryReads memoryReads) {
        try (RocksStore rocks = RocksStore.open(TestStores.properties(dir))) {
            rocks.write(bytes("value"), value(1, "v"));
            rocks.write(bytes("tombstone"), TestStores.tombstone(2));
            rocks.write(bytes("expired"), expiring(3, NOW - 60_000, "gone"));
            rocks.write(bytes("expiring"), expiring(4, NOW + 3_600_000, "later"));
            rocks.flush();
        }
        return new LocalStore(RocksStore.open(TestStores.properties(dir)), new StorageExecutor(2, 64), 64,
                StorageProperties.ReadBatch.DEFAULTS, memoryReads);
    }

    private static Throwable closedRead(Path dir, StorageProperties.MemoryReads memoryReads) {
        LocalStore store = coldStore(dir, memoryReads);
        store.get(bytes("value"), UNLIMITED.lease()).block();
        store.close();
        return catchThrowable(() -> store.get(bytes("value"), UNLIMITED.lease()).block());
    }

    private static Record expiring(long timestamp, long expiresAt, String text) {
        byte[] value = bytes(text);
        byte[] array = new byte[Record.headerBytes(true) + value.length];
        System.arraycopy(value, 0, array, Record.headerBytes(true), value.length);
        return Record.expiringValue(new Version(timestamp, 1), 1, expiresAt, array);
    }
}
