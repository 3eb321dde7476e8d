package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reaping: expired values become tombstones of their version, and compaction drops their bytes. */
class ExpiryReapTest {

    static final long NOW = 2_000_000_000_000L;

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

    static Record expiring(long writtenMillis, int node, long expiresAt, String value) {
        return ExpiringRecordTest.expiring(new Version(writtenMillis << 16, node), 3, expiresAt, value);
    }

    @Test
    void expiredValuesAreReapedIntoTombstonesOfTheirVersionAndOthersStay() {
        Record expired = expiring(NOW - 10_000, 1, NOW - 1, "gone");
        Record later = expiring(NOW - 10_000, 1, NOW + 60_000, "not yet");
        store.write(bytes("expired"), expired);
        store.write(bytes("later"), later);
        store.write(bytes("plain"), TestStores.value(new Version((NOW - 10_000) << 16, 1), "forever"));

        ExpiryIndex.Reaped reaped = store.reapExpired(NOW, 100);

        assertThat(reaped).isEqualTo(new ExpiryIndex.Reaped(1, 1));
        Record stored = store.get(bytes("expired"));
        assertThat(stored.isTombstone()).isTrue();
        assertThat(stored.version()).isEqualTo(expired.version());
        assertThat(stored.expiresAtMillis()).isEqualTo(expired.expiresAtMillis());
        assertThat(text(store.get(bytes("later")))).isEqualTo("not yet");
        assertThat(text(store.get(bytes("plain")))).isEqualTo("forever");
        assertThat(store.reapExpired(NOW, 100)).as("nothing left to reap").isEqualTo(new ExpiryIndex.Reaped(0, 0));

        // A late copy of the expired value (a hint, a repair) does not bring its bytes back.
        store.write(bytes("expired"), expired);
        assertThat(store.get(bytes("expired")).isTombstone()).isTrue();
        assertThat(store.reapExpired(NOW, 100)).as("its index entry is read, nothing to reap").isEqualTo(new ExpiryIndex.Reaped(1, 0));
    }

    @Test
    void aKeyWrittenAgainKeepsItsNewValueAndItsOldIndexEntryIsDropped() {
        store.write(bytes("k"), expiring(NOW - 10_000, 1, NOW - 5_000, "old"));
        store.write(bytes("k"), TestStores.value(new Version((NOW - 9_000) << 16, 1), "new, forever"));

        assertThat(store.reapExpired(NOW, 100)).isEqualTo(new ExpiryIndex.Reaped(1, 0));
        assertThat(text(store.get(bytes("k")))).isEqualTo("new, forever");
    }

    @Test
    void aStepReapsNoMoreThanItsLimitInExpiryOrder() {
        for (int i = 0; i < 10; i++) {
            store.write(bytes("k" + i), expiring(NOW - 10_000, 1, NOW - 1000 + i, "v"));
        }

        assertThat(store.reapExpired(NOW, 4)).isEqualTo(new ExpiryIndex.Reaped(4, 4));
        assertThat(store.get(bytes("k3")).isTombstone()).isTrue();
        assertThat(store.get(bytes("k4")).isTombstone()).as("expires later: the next step's").isFalse();
        assertThat(store.reapExpired(NOW, 100)).isEqualTo(new ExpiryIndex.Reaped(6, 6));
    }

    @Test
    void compactionDropsTheBytesOfReapedValues() {
        // Random, so compression leaves the values their size.
        Random random = new Random(1);
        for (int i = 0; i < 2000; i++) {
            String value = random.ints(4096, 'a', 'z' + 1).collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
            store.write(bytes(String.format("key-%05d", i)), expiring(NOW - 10_000, 1, NOW - 1, value));
        }
        store.flush();
        store.compact();
        long before = store.longProperty("rocksdb.total-sst-files-size");
        assertThat(before).as("the values are on disk").isGreaterThan(2000L * 4096 / 2);

        int reaped = 0;
        for (ExpiryIndex.Reaped step = store.reapExpired(NOW, 128); step.entries() > 0; step = store.reapExpired(NOW, 128)) {
            reaped += step.records();
        }
        store.flush();
        store.compact();

        assertThat(reaped).isEqualTo(2000);
        long after = store.longProperty("rocksdb.total-sst-files-size");
        assertThat(after).as("bytes in SST files after reaping and compaction, from %d", before).isLessThan(before / 20);
        assertThat(store.get(bytes("key-00000")).valueLength()).isZero();
    }
}
