package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackgroundWorkTest {

    @TempDir
    Path dir;

    LocalStore store;
    MeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void open() {
        store = LocalStore.open(TestStores.properties(dir));
        new StorageMetrics(store).bindTo(registry);
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void flushesAndCompactionsShowInTheirCounters() throws InterruptedException {
        assertThat(counter("kvlab.rocksdb.flushes")).isZero();
        assertThat(counter("kvlab.rocksdb.compactions")).isZero();

        // Two SST files of the same keys in level 0, then one compaction merges them.
        writeAndFlush(1);
        awaitAtLeast(() -> counter("kvlab.rocksdb.flushes"), 1);
        assertThat(counter("kvlab.rocksdb.flush")).as("bytes flushed").isGreaterThan(100 * 100);
        writeAndFlush(2);
        awaitAtLeast(() -> counter("kvlab.rocksdb.flushes"), 2);

        store.onStorage(rocks -> {
            rocks.compact();
            return true;
        }).block();

        awaitAtLeast(() -> counter("kvlab.rocksdb.compactions"), 1);
        assertThat(counter("kvlab.rocksdb.compaction")).as("bytes compacted").isGreaterThan(100 * 100);
        assertThat(registry.get("kvlab.rocksdb.flush").functionCounter().getId().getBaseUnit()).isEqualTo("bytes");
    }

    /** 100 keys of random 200-byte values (LZ4 cannot shrink them), written at timestamp ts, then flushed. */
    private void writeAndFlush(long ts) {
        Random random = new Random(ts);
        for (int i = 0; i < 100; i++) {
            StringBuilder text = new StringBuilder();
            random.ints(200, 'a', 'z' + 1).forEach(c -> text.append((char) c));
            store.write(bytes("key-" + i), value(ts, text.toString())).block();
        }
        store.onStorage(rocks -> {
            rocks.flush();
            return true;
        }).block();
    }

    private double counter(String name) {
        return registry.get(name).functionCounter().count();
    }

    /** RocksDB tells its listeners on its own threads, possibly just after a flush call returned. */
    private static void awaitAtLeast(DoubleSupplier value, double least) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (value.getAsDouble() < least && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(value.getAsDouble()).isGreaterThanOrEqualTo(least);
    }
}
