package dev.kvlab.storage;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.nio.file.Path;
import org.springframework.util.unit.DataSize;

/** Small stores for tests: real RocksDB in a temporary directory, little memory. */
public final class TestStores {

    private TestStores() {
    }

    public static StorageProperties properties(Path dir) {
        return new StorageProperties(dir, DataSize.ofMegabytes(8), DataSize.ofMegabytes(4), 2, false, 2, 64, true,
                StorageProperties.ReadBatch.DEFAULTS);
    }

    public static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static Record value(long timestamp, String value) {
        return value(new Version(timestamp, 1), value);
    }

    public static Record value(Version version, String value) {
        byte[] bytes = bytes(value);
        byte[] array = Record.newValueArray(bytes.length);
        System.arraycopy(bytes, 0, array, Record.HEADER_BYTES, bytes.length);
        return Record.value(version, array);
    }

    public static Record tombstone(long timestamp) {
        return Record.tombstone(new Version(timestamp, 1));
    }

    public static String text(Record record) {
        return new String(record.valueBytes(), StandardCharsets.UTF_8);
    }

    /**
     * Holds the executor's one thread until the latch is counted down. Returns once the holding
     * task runs: queued but not yet taken, it would still count among the queued calls.
     */
    public static CountDownLatch occupy(StorageExecutor executor) throws InterruptedException {
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        executor.execute(() -> {
            running.countDown();
            try {
                busy.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        if (!running.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the storage executor did not take the holding task within 10 s");
        }
        return busy;
    }
}
