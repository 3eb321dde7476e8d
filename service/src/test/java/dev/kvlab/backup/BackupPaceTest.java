package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BackupPaceTest {

    static final long MIB = 1024 * 1024;
    static final long BURST = TimeUnit.MILLISECONDS.toNanos(50);

    /** A clock that moves only when the pace sleeps, or when the test lets time pass. */
    long now = 1_000_000_000L;
    final List<Long> sleeps = new ArrayList<>();
    final BackupPace.Sleeper sleeper = nanos -> {
        sleeps.add(nanos);
        now += nanos;
    };

    @Test
    void readsWaitUntilTheirBytesAreDueAtThePace() throws IOException {
        BackupPace pace = new BackupPace(MIB, () -> now, sleeper);

        pace.take(MIB);
        pace.take(MIB / 2);

        assertThat(sleeps).containsExactly(TimeUnit.SECONDS.toNanos(1) - BURST, TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(now - 1_000_000_000L).as("1.5 MiB at 1 MiB/s, less the burst allowed").isEqualTo(TimeUnit.MILLISECONDS.toNanos(1450));
    }

    @Test
    void aPaceLeftIdleDoesNotSaveUpForABurst() throws IOException {
        BackupPace pace = new BackupPace(MIB, () -> now, sleeper);
        pace.take(MIB);
        sleeps.clear();

        now += TimeUnit.SECONDS.toNanos(10);
        pace.take(MIB);

        assertThat(sleeps).containsExactly(TimeUnit.SECONDS.toNanos(1) - BURST);
    }

    @Test
    void aPaceOfZeroNeverWaits() throws IOException {
        BackupPace pace = new BackupPace(0, () -> now, sleeper);
        for (int i = 0; i < 100; i++) {
            pace.take(64 * MIB);
        }
        assertThat(sleeps).isEmpty();
    }

    @Test
    void aPacedStreamCountsEveryByteItReads() throws IOException {
        BackupPace pace = new BackupPace(MIB, () -> now, sleeper);
        byte[] content = new byte[(int) (2 * MIB)];
        try (InputStream in = pace.paced(new ByteArrayInputStream(content))) {
            assertThat(in.readAllBytes()).hasSize(content.length);
        }
        assertThat(now - 1_000_000_000L).as("2 MiB at 1 MiB/s").isEqualTo(TimeUnit.SECONDS.toNanos(2) - BURST);
    }
}
