package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.Version;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HybridLogicalClockTest {

    final AtomicLong wall = new AtomicLong(1_000);
    final HybridLogicalClock clock = new HybridLogicalClock(7, wall::get);

    @Test
    void versionsFollowTheWallClock() {
        Version first = clock.now();
        wall.set(2_000);
        Version second = clock.now();

        assertThat(first.timestamp() >> 16).isEqualTo(1_000);
        assertThat(second.timestamp() >> 16).isEqualTo(2_000);
        assertThat(second.node()).isEqualTo(7);
    }

    @Test
    void versionsGrowWhenTheClockStallsOrStepsBack() {
        Version first = clock.now();
        Version second = clock.now();
        wall.set(500);
        Version third = clock.now();

        assertThat(second.isNewerThan(first)).isTrue();
        assertThat(third.isNewerThan(second)).isTrue();
    }

    @Test
    void aVersionSeenFromAFastClockIsOvertaken() {
        Version fromTheFuture = new Version(90_000L << 16, 3);

        clock.observe(fromTheFuture);

        assertThat(clock.now().isNewerThan(fromTheFuture)).isTrue();
    }

    @Test
    void nodeIdsAreStableAndDiffer() {
        assertThat(HybridLogicalClock.nodeIdOf("http://a:1")).isEqualTo(HybridLogicalClock.nodeIdOf("http://a:1"));
        assertThat(HybridLogicalClock.nodeIdOf("http://a:1")).isNotEqualTo(HybridLogicalClock.nodeIdOf("http://a:2"));
    }
}
