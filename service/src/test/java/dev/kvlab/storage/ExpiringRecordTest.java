package dev.kvlab.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The stored form of a write with a time to live, beside the records of earlier releases. */
class ExpiringRecordTest {

    static final Version VERSION = new Version(1_000_000L << 16 | 5, 3);

    static Record expiring(Version version, int from, long expiresAt, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        byte[] array = new byte[Record.headerBytes(true) + bytes.length];
        System.arraycopy(bytes, 0, array, Record.headerBytes(true), bytes.length);
        return Record.expiringValue(version, from, expiresAt, array);
    }

    @Test
    void anExpiringValueRoundTripsWithItsExpiryFromAndValue() {
        Record decoded = Record.decode(expiring(VERSION, 3, 1_060_000, "hello").encoded());

        assertThat(decoded.version()).isEqualTo(VERSION);
        assertThat(decoded.from()).isEqualTo(3);
        assertThat(decoded.expires()).isTrue();
        assertThat(decoded.expiresAtMillis()).isEqualTo(1_060_000);
        assertThat(decoded.isTombstone()).isFalse();
        assertThat(TestStores.text(decoded)).isEqualTo("hello");
        assertThat(decoded.valueLength()).isEqualTo(5);
        assertThat(decoded.header()).isEqualTo(new RecordHeader(VERSION, 3, false, 1_060_000));
    }

    @Test
    void anExpiringValueIsLiveBeforeItsExpiryAndDeadFromIt() {
        Record record = expiring(VERSION, 3, 1_060_000, "v");

        assertThat(record.isDeadAt(1_059_999)).isFalse();
        assertThat(record.isDeadAt(1_060_000)).isTrue();
        assertThat(record.header().deadAt(1_060_000)).isTrue();
        assertThat(TestStores.value(VERSION, "v").isDeadAt(Long.MAX_VALUE - 1)).as("a value that does not expire").isFalse();
        assertThat(TestStores.value(VERSION, "v").expiresAtMillis()).isEqualTo(Record.NEVER);
    }

    @Test
    void aRecordOfAnEarlierReleaseReadsAsOneThatNeverExpires() {
        // [timestamp:8][node:4][flags:1][value], flags = from 5, no tombstone: as kvlab wrote them before expiry.
        byte[] stored = ByteBuffer.allocate(16).putLong(77L << 16).putInt(2 ^ Integer.MIN_VALUE).put((byte) (5 << 1))
                .put("abc".getBytes(StandardCharsets.UTF_8)).array();

        Record record = Record.decode(stored);

        assertThat(record.expires()).isFalse();
        assertThat(record.from()).isEqualTo(5);
        assertThat(record.version()).isEqualTo(new Version(77L << 16, 2));
        assertThat(TestStores.text(record)).isEqualTo("abc");
        assertThat(RecordHeader.of(stored)).isEqualTo(new RecordHeader(new Version(77L << 16, 2), 5, false));
    }

    @Test
    void aReapedRecordIsATombstoneOfTheSameWriteThatTheMaxMergeKeepsOverTheValue() {
        Record value = expiring(VERSION, 3, 1_060_000, "a value that takes room");
        Record reaped = Record.decode(Record.reaped(value).encoded());

        assertThat(reaped.isTombstone()).isTrue();
        assertThat(reaped.version()).isEqualTo(VERSION);
        assertThat(reaped.from()).isEqualTo(3);
        assertThat(reaped.expiresAtMillis()).isEqualTo(1_060_000);
        assertThat(reaped.valueLength()).isZero();
        assertThat(Arrays.compareUnsigned(reaped.encoded(), value.encoded())).as("RocksDB's max keeps the reaped form").isPositive();
        Record newer = expiring(new Version(VERSION.timestamp() + 1, 0), 3, 1_000, "newer");
        assertThat(Arrays.compareUnsigned(newer.encoded(), reaped.encoded())).as("and a newer write over it").isPositive();
        assertThat(Record.of(reaped.header()).encoded()).as("repair's header-only copy").isEqualTo(reaped.encoded());
        assertThatThrownBy(() -> Record.reaped(TestStores.value(VERSION, "x"))).hasMessageContaining("only an expiring record");
    }

    @Test
    void expiringBytesThatAreNotARecordAreRejected() {
        byte[] cut = Arrays.copyOf(expiring(VERSION, 3, 1_060_000, "").encoded(), Record.HEADER_BYTES + 4);
        assertThatThrownBy(() -> Record.decode(cut)).hasMessageContaining("shorter than its header");
        byte[] reapedWithValue = expiring(VERSION, 3, 1_060_000, "x").encoded().clone();
        reapedWithValue[12] |= 1;
        assertThatThrownBy(() -> Record.decode(reapedWithValue)).hasMessageContaining("tombstone carries a value");
        assertThatThrownBy(() -> expiring(VERSION, 3, 0, "x")).hasMessageContaining("positive");
        assertThatThrownBy(() -> Record.expiringValue(VERSION, 3, 5, Record.newValueArray(2))).hasMessageContaining("no room");
    }
}
