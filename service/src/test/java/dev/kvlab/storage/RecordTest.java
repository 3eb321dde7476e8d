package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RecordTest {

    @Test
    void aValueRoundTripsThroughItsStoredForm() {
        Record record = TestStores.value(42L << 16 | 7, "hello");

        Record decoded = Record.decode(record.encoded());

        assertThat(decoded.version()).isEqualTo(new Version(42L << 16 | 7, 1));
        assertThat(decoded.isTombstone()).isFalse();
        assertThat(TestStores.text(decoded)).isEqualTo("hello");
    }

    @Test
    void anEmptyValueIsAValueNotATombstone() {
        Record record = Record.decode(TestStores.value(1, "").encoded());

        assertThat(record.isTombstone()).isFalse();
        assertThat(record.valueLength()).isZero();
    }

    @Test
    void aTombstoneCarriesItsVersionAndNoValue() {
        Record record = Record.decode(TestStores.tombstone(99).encoded());

        assertThat(record.isTombstone()).isTrue();
        assertThat(record.version().timestamp()).isEqualTo(99);
        assertThat(record.valueLength()).isZero();
    }

    @Test
    void theValueViewDoesNotCopyAndCannotModifyTheRecord() {
        Record record = TestStores.value(1, "abc");

        assertThat(record.value().isReadOnly()).isTrue();
        assertThat(record.value().remaining()).isEqualTo(3);
        assertThat(record.value().get(0)).isEqualTo((byte) 'a');
    }

    @Test
    void bytesThatAreNotARecordAreRejected() {
        assertThatThrownBy(() -> Record.decode(bytes("short"))).hasMessageContaining("shorter than its header");
        byte[] tombstoneWithValue = TestStores.value(1, "x").encoded().clone();
        tombstoneWithValue[12] |= 1;
        assertThatThrownBy(() -> Record.decode(tombstoneWithValue)).hasMessageContaining("tombstone carries a value");
    }

    @Test
    void aRecordKeepsTheFromOfItsWriteBesideItsTombstoneFlag() {
        Record value = Record.value(new Version(5, 1), 3, Record.newValueArray(0));
        Record tombstone = Record.tombstone(new Version(5, 1), 63);

        assertThat(Record.decode(value.encoded()).from()).isEqualTo(3);
        assertThat(Record.decode(value.encoded()).isTombstone()).isFalse();
        assertThat(Record.decode(tombstone.encoded()).from()).isEqualTo(63);
        assertThat(Record.decode(tombstone.encoded()).isTombstone()).isTrue();
        assertThat(TestStores.value(1, "x").from()).as("a record that does not say").isEqualTo(Record.UNKNOWN_FROM);
        assertThatThrownBy(() -> Record.tombstone(new Version(5, 1), 64)).hasMessageContaining("0 to 63");
    }

    @Test
    void storedFormsCompareAsUnsignedBytesTheWayTheirVersionsCompare() {
        // RocksDB's "max" merge operator keeps the largest stored form of a key: it must be the newest.
        Random random = new Random(7);
        List<Version> versions = new ArrayList<>();
        for (long timestamp : new long[] {0, 1, 255, 256, 1L << 40, (1L << 56) - 1, 1L << 56, Long.MAX_VALUE}) {
            for (int node : new int[] {Integer.MIN_VALUE, -1, 0, 1, 127, 128, Integer.MAX_VALUE}) {
                versions.add(new Version(timestamp, node));
            }
        }
        for (int i = 0; i < 1000; i++) {
            versions.add(new Version(random.nextLong(Long.MAX_VALUE), random.nextInt()));
        }
        List<byte[]> stored = versions.stream()
                .map(version -> random.nextBoolean() ? Record.tombstone(version)
                        : TestStores.value(version, "x".repeat(random.nextInt(4))))
                .map(Record::encoded)
                .toList();

        for (int a = 0; a < versions.size(); a++) {
            for (int b = 0; b < versions.size(); b++) {
                assertThat(Integer.signum(Arrays.compareUnsigned(stored.get(a), stored.get(b))))
                        .as("%s against %s", versions.get(a), versions.get(b))
                        .isEqualTo(Integer.signum(versions.get(a).compareTo(versions.get(b))));
            }
        }
    }

    @Test
    void versionsOrderByTimestampThenNode() {
        assertThat(new Version(2, 0).isNewerThan(new Version(1, 9))).isTrue();
        assertThat(new Version(1, 2).isNewerThan(new Version(1, 1))).isTrue();
        assertThat(new Version(1, 1).isNewerThan(new Version(1, 1))).isFalse();
        assertThat(new Version(1, -5).isNewerThan(new Version(1, 3))).isFalse();
    }

    @Test
    void versionsHaveAWireForm() {
        Version version = new Version(123456789L << 16, -17);

        assertThat(Version.parse(version.toString())).isEqualTo(version);
        assertThatThrownBy(() -> Version.parse("12")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Version.parse("a.b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Version.parse("-1.0")).isInstanceOf(IllegalArgumentException.class);
    }
}
