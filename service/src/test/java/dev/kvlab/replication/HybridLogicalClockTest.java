package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.storage.Version;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HybridLogicalClockTest {

    final AtomicLong wall = new AtomicLong(1_000);
    final HybridLogicalClock clock = new HybridLogicalClock(7, wall::get, 60_000);

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
        Version fromTheFuture = new Version(50_000L << 16, 3);

        clock.observe(fromTheFuture);

        assertThat(clock.now().isNewerThan(fromTheFuture)).isTrue();
    }

    @Test
    void aVersionFurtherAheadThanTheToleratedSkewIsNeitherTakenInNorAdmitted() {
        Version tooFar = new Version((1_000L + 60_001) << 16, 3);
        Version atTheEdge = new Version((1_000L + 60_000) << 16, 3);

        clock.observe(tooFar);
        assertThat(clock.now().timestamp() >> 16).as("the clock did not jump").isEqualTo(1_000);
        assertThatThrownBy(() -> clock.admit(tooFar))
                .isInstanceOf(VersionTooFarAheadException.class)
                .hasMessageContaining("60001 ms ahead of this node's clock; at most 60000 ms are tolerated");

        clock.admit(atTheEdge);
        assertThat(clock.now().isNewerThan(atTheEdge)).isTrue();
    }

    @Test
    void nodeIdsAreStableAndDiffer() {
        assertThat(HybridLogicalClock.nodeIdOf("http://a:1")).isEqualTo(HybridLogicalClock.nodeIdOf("http://a:1"));
        assertThat(HybridLogicalClock.nodeIdOf("http://a:1")).isNotEqualTo(HybridLogicalClock.nodeIdOf("http://a:2"));
    }
}
