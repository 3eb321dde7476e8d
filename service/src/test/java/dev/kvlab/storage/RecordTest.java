package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        byte[] badFlags = TestStores.value(1, "x").encoded().clone();
        badFlags[0] = 4;
        assertThatThrownBy(() -> Record.decode(badFlags)).hasMessageContaining("unknown flags");
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
