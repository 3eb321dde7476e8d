package dev.kvlab.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ChangedKeysTest {

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aKeyChangedOverAndOverIsKeptOnceAndDoesNotFillTheBound() {
        ChangedKeys changes = new ChangedKeys(10L * (ChangedKeys.OVERHEAD_BYTES + 8));
        for (int round = 0; round < 1000; round++) {
            for (int i = 0; i < 5; i++) {
                changes.add(key(i));
            }
        }
        assertThat(changes.overflowed()).isFalse();
        assertThat(changes.size()).isEqualTo(5);
        assertThat(changes.keys()).extracting(key -> new String(key, StandardCharsets.UTF_8))
                .containsExactlyInAnyOrder("key-0", "key-1", "key-2", "key-3", "key-4");
    }

    @Test
    void moreDistinctKeysThanTheBoundHoldsOverflowAndKeepNone() {
        ChangedKeys changes = new ChangedKeys(10L * (ChangedKeys.OVERHEAD_BYTES + 8));
        for (int i = 0; i < 11; i++) {
            changes.add(key(i));
        }
        assertThat(changes.overflowed()).isTrue();
        assertThat(changes.size()).isZero();
        assertThat(changes.isEmpty()).isFalse();
    }
}
