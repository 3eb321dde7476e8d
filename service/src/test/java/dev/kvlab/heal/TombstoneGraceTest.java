package dev.kvlab.heal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.Version;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TombstoneGraceTest {

    static final long NOW = 1_800_000_000_000L;
    static final long HOUR = 3_600_000L;
    final TombstoneGrace grace = new TombstoneGrace(Duration.ofHours(24), Duration.ofSeconds(1), () -> NOW);

    static RecordHeader deletedAt(long millis) {
        return new RecordHeader(new Version(millis << 16, 7), 3, true);
    }

    @Test
    void aTombstoneWithinItsGraceStays() {
        RecordHeader recent = deletedAt(NOW - 23 * HOUR);
        assertThat(grace.forgettable(recent)).isFalse();
        assertThat(grace.purgeable(recent, List.of("a"), "a", node -> NOW)).isFalse();
    }

    @Test
    void aValueIsNeverPurged() {
        RecordHeader value = new RecordHeader(new Version((NOW - 48 * HOUR) << 16, 7), 1, false);
        assertThat(grace.forgettable(value)).isFalse();
        assertThat(grace.purgeable(value, List.of("a"), "a", node -> NOW)).isFalse();
    }

    @Test
    void pastItsGraceATombstoneWaitsForACompleteRoundWithEveryOtherOwnerThatCoveredTheGrace() {
        RecordHeader old = deletedAt(NOW - 30 * HOUR);
        long graceEnded = NOW - 6 * HOUR;
        Map<String, Long> roundsBegun = Map.of("b", graceEnded + 1001, "c", graceEnded + 999);

        assertThat(grace.purgeable(old, List.of("a", "b", "c"), "a", node -> roundsBegun.getOrDefault(node, 0L)))
                .as("c's last complete round began less than the settle after the grace ended").isFalse();
        assertThat(grace.purgeable(old, List.of("a", "b"), "a", node -> roundsBegun.getOrDefault(node, 0L))).isTrue();
        assertThat(grace.purgeable(old, List.of("a"), "a", node -> 0L)).as("the only owner").isTrue();
    }

    @Test
    void aRoundCoversTheWritesOlderThanItsStartByTheSettleAndLeavesYoungerOnesInFlight() {
        long started = NOW;
        assertThat(grace.covered(new RecordHeader(new Version((started - 1000) << 16, 7), 3, false), started)).isTrue();
        assertThat(grace.covered(new RecordHeader(new Version((started - 999) << 16, 7), 3, false), started)).isFalse();
        assertThat(grace.covered(deletedAt(started + 5000), started)).as("a delete made during the round").isFalse();
    }
}
