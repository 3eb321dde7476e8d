package dev.kvlab.heal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.Version;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The recent changes answer a key's header at any generation since their floor as it was then,
 * within their memory bound, and say they cannot tell below it: what a round's comparison by
 * changed keys relies on to see both sides at the snapshots of their hashes.
 */
class RecentChangesTest {

    @Test
    void aKeysHeaderAtAnEarlierGenerationIsTheOneItHadThen() {
        Random random = new Random(7);
        RecentChanges recent = new RecentChanges(40 * (RecentChanges.ENTRY_BYTES + 8 + 3 * RecentChanges.CHANGE_BYTES));
        // What each key held after each generation: the model.
        List<Map<String, RecordHeader>> history = new ArrayList<>();
        Map<String, RecordHeader> now = new HashMap<>();
        recent.reset(0);
        history.add(new HashMap<>(now));
        for (int generation = 1; generation <= 60; generation++) {
            for (int change = 0; change < 5; change++) {
                String key = "key-" + random.nextInt(50);
                RecordHeader after = random.nextInt(4) == 0 ? null
                        : new RecordHeader(new Version(generation * 100L + change, 1), 3, random.nextBoolean());
                recent.changed(key.getBytes(StandardCharsets.UTF_8), now.get(key), after, generation);
                now.put(key, after);
            }
            history.add(new HashMap<>(now));
        }
        assertThat(recent.floor()).as("the bound forgot some keys").isPositive();
        int told = 0;
        for (int generation = 0; generation <= 60; generation++) {
            for (int k = 0; k < 50; k++) {
                String key = "key-" + k;
                RecentChanges.At at = recent.at(key.getBytes(StandardCharsets.UTF_8), generation);
                if (generation < recent.floor()) {
                    assertThat(at.known()).isFalse();
                    continue;
                }
                assertThat(at.known()).isTrue();
                RecordHeader expected = history.get(generation).get(key);
                if (at.read()) {
                    assertThat(history.get(60).get(key)).as("a key told unchanged since %d holds now what it held then", generation)
                            .isEqualTo(expected);
                } else {
                    assertThat(at.header()).as("%s at generation %d", key, generation).isEqualTo(expected);
                    told++;
                }
            }
        }
        assertThat(told).isPositive();
    }

    @Test
    void theKeysKeptAreTheLatestChangedWithTheirHeadersNow() {
        RecentChanges recent = new RecentChanges(2 * (RecentChanges.ENTRY_BYTES + 1 + RecentChanges.CHANGE_BYTES));
        RecordHeader header = new RecordHeader(new Version(1, 1), 3, false);
        recent.changed(new byte[] {1}, null, header, 1);
        recent.changed(new byte[] {2}, null, null, 2);
        recent.changed(new byte[] {3}, null, header, 3);
        assertThat(recent.keysSince(0)).extracting(key -> key.key()[0]).containsExactlyInAnyOrder((byte) 2, (byte) 3);
        assertThat(recent.floor()).isEqualTo(1);
        assertThat(recent.at(new byte[] {1}, 0).known()).isFalse();
        assertThat(recent.at(new byte[] {1}, 1)).isEqualTo(RecentChanges.At.UNCHANGED);
    }

    @Test
    void theKeysChangedSinceAnUpdateAreThoseWhoseLastChangeCameAfterIt() {
        RecentChanges recent = new RecentChanges(1 << 20);
        RecordHeader header = new RecordHeader(new Version(1, 1), 3, false);
        recent.changed(new byte[] {1}, null, header, 1);
        recent.changed(new byte[] {2}, null, header, 2);
        recent.changed(new byte[] {3}, null, header, 3);
        recent.changed(new byte[] {1}, header, null, 4);
        recent.changed(new byte[] {4}, null, header, 4);

        assertThat(recent.keysSince(3)).as("changed in update 4").extracting(key -> key.key()[0]).containsExactlyInAnyOrder((byte) 1, (byte) 4);
        assertThat(recent.keysSince(2)).extracting(key -> key.key()[0]).containsExactlyInAnyOrder((byte) 1, (byte) 3, (byte) 4);
        assertThat(recent.keysSince(4)).as("nothing changed after the last update").isEmpty();
        assertThat(recent.keysSince(0)).hasSize(4);
        assertThat(recent.keysSince(3)).filteredOn(key -> key.key()[0] == 1).singleElement()
                .satisfies(key -> assertThat(key.header()).as("a key's header now: deleted in update 4").isNull());
    }
}
