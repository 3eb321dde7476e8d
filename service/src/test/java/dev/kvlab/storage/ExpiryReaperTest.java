package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reaper's ticks: what expired more than its delay ago is reaped, in bounded batches. */
class ExpiryReaperTest {

    static final long NOW = 2_000_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void ticksReapWhatExpiredBeforeTheDelayInBatchesAndCountIt() {
        AtomicLong clock = new AtomicLong(NOW);
        try (LocalStore store = LocalStore.open(TestStores.properties(dir))) {
            for (int i = 0; i < 1000; i++) {
                store.write(bytes("k" + i), ExpiryReapTest.expiring(NOW - 60_000, 1, NOW - 5_000 + i, "v")).block();
            }
            try (ExpiryReaper reaper = new ExpiryReaper(store, clock::get, Duration.ofSeconds(5),
                    new ExpiryProperties(Duration.ofDays(1), Duration.ofMillis(20), 64, 300))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> reaper.reaped() == 1);
                assertThat(store.get(bytes("k0"), new dev.kvlab.memory.MemoryBudget(1 << 20).lease()).block().isTombstone()).isTrue();
                assertThat(store.get(bytes("k1"), new dev.kvlab.memory.MemoryBudget(1 << 20).lease()).block().isTombstone())
                        .as("expired less than the delay ago").isFalse();

                clock.set(NOW + 10_000);
                await().atMost(Duration.ofSeconds(20)).until(() -> reaper.reaped() == 1000);
            }
        }
    }
}
