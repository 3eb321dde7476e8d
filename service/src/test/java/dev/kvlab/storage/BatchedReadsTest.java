package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** Reads that need a storage thread, gathered into MultiGets ({@link BatchedReads}). */
class BatchedReadsTest {

    static final MemoryBudget UNLIMITED = new MemoryBudget(Long.MAX_VALUE);
    static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    RocksStore rocks;
    final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened.reversed()) {
            closeable.close();
        }
        if (rocks != null) {
            rocks.close();
        }
    }

    private RocksStore open(int maxKeys, DataSize maxBytes) {
        StorageProperties defaults = TestStores.properties(dir);
        rocks = RocksStore.open(new StorageProperties(dir, defaults.blockCacheSize(), defaults.writeBufferSize(),
                defaults.maxWriteBuffers(), false, 1, 64, true, new StorageProperties.ReadBatch(true, maxKeys, maxBytes, 1)));
        return rocks;
    }

    private StorageExecutor executor(int threads) {
        StorageExecutor executor = new StorageExecutor(threads, 1024);
        opened.add(executor);
        return executor;
    }

    @Test
    void concurrentReadsOfPresentAbsentTombstonedAndExpiredKeysAnswerAsAGetDoes() throws Exception {
        // A byte limit of a few records, so MultiGet leaves keys out and they are read alone.
        open(16, DataSize.ofKilobytes(4));
        long past = System.currentTimeMillis() - 60_000;
        for (int i = 0; i < 400; i++) {
            byte[] key = bytes("key" + i);
            switch (i % 4) {
                case 0 -> rocks.write(key, value(i + 1, ("v" + i).repeat(100)));
                case 1 -> rocks.write(key, expired(i + 1, past, "gone" + i));
                case 2 -> rocks.write(key, TestStores.tombstone(i + 1));
                default -> { } // never written
            }
        }
        rocks.flush();
        StorageExecutor one = executor(1);
        BatchedReads reads = new BatchedReads(rocks, one, 1024, 16, 1);
        CountDownLatch busy = TestStores.occupy(one);

        Map<Integer, Mono<Optional<Record>>> answers = new ConcurrentHashMap<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            int reader = r;
            readers.add(Thread.ofPlatform().start(() -> {
                for (int i = reader; i < 400; i += 4) {
                    Mono<Optional<Record>> answer = reads.read(bytes("key" + i), UNLIMITED.lease())
                            .map(Optional::of).defaultIfEmpty(Optional.empty()).cache();
                    answer.subscribe(null, failure -> { });
                    answers.put(i, answer);
                }
            }));
        }
        for (Thread reader : readers) {
            reader.join();
        }
        busy.countDown();

        long now = System.currentTimeMillis();
        for (int i = 0; i < 400; i++) {
            Record read = answers.get(i).block(WAIT).orElse(null);
            Record got = rocks.get(bytes("key" + i));
            if (got == null) {
                assertThat(read).as("key%d", i).isNull();
            } else {
                assertThat(read).as("key%d", i).isNotNull();
                assertThat(read.encoded()).as("key%d", i).isEqualTo(got.encoded());
            }
            // What the coordinator serves: a value only for the live ones.
            assertThat(read != null && !read.isDeadAt(now)).as("key%d is live", i).isEqualTo(i % 4 == 0);
        }
        assertThat(reads.batchesRead()).as("batches").isLessThan(400);
        assertThat(reads.waiting()).isZero();
    }

    @Test
    void aBatchNeverReadsMoreKeysOrAnswersMoreBytesThanItsBounds() throws Exception {
        open(8, DataSize.ofKilobytes(4));
        String kilobyte = "x".repeat(1000);
        for (int i = 0; i < 100; i++) {
            rocks.write(bytes("key" + i), value(1, kilobyte + i));
        }
        rocks.flush();
        StorageExecutor one = executor(1);
        BatchedReads reads = new BatchedReads(rocks, one, 1024, 8, 1);
        CountDownLatch busy = TestStores.occupy(one);

        List<Mono<Record>> answers = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            answers.add(reads.read(bytes("key" + i), UNLIMITED.lease()).cache());
            answers.getLast().subscribe(null, failure -> { });
        }
        busy.countDown();
        List<Record> records = Flux.concat(answers).collectList().block(WAIT);

        assertThat(records).hasSize(100);
        for (int i = 0; i < 100; i++) {
            assertThat(TestStores.text(records.get(i))).isEqualTo(kilobyte + i);
        }
        assertThat(reads.largestBatch()).isEqualTo(8);
        assertThat(reads.batchesRead()).isEqualTo(13);
        // The value that crosses the limit is the last one MultiGet answers.
        long record = records.getFirst().encoded().length + 2;
        assertThat(reads.largestBatchBytes()).isGreaterThan(0).isLessThanOrEqualTo(4096 + record);
    }

    @Test
    void aReadWhenIdleLeavesAtOnceAlone() {
        open(32, DataSize.ofMegabytes(1));
        rocks.write(bytes("k"), value(1, "v"));
        BatchedReads reads = new BatchedReads(rocks, executor(2), 64, 32, 1);

        StepVerifier.create(reads.read(bytes("k"), UNLIMITED.lease()).map(TestStores::text))
                .expectNext("v")
                .verifyComplete();
        StepVerifier.create(reads.read(bytes("absent"), UNLIMITED.lease())).verifyComplete();

        assertThat(reads.batchesRead()).isEqualTo(2);
        assertThat(reads.largestBatch()).isEqualTo(1);
    }

    @Test
    void readsIssuedWhileABatchIsReadLeaveTogetherWithTheNext() throws Exception {
        open(32, DataSize.ofMegabytes(1));
        for (int i = 0; i < 11; i++) {
            rocks.write(bytes("key" + i), value(1, "v" + i));
        }
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch firstMayFinish = new CountDownLatch(1);
        Function<List<byte[]>, Record[]> heldFirst = firstBatchHeld(firstStarted, firstMayFinish);
        BatchedReads reads = new BatchedReads(rocks, executor(2), 64, 32, 1, heldFirst);

        Mono<Record> first = reads.read(bytes("key0"), UNLIMITED.lease()).cache();
        first.subscribe(null, failure -> { });
        assertThat(firstStarted.await(10, TimeUnit.SECONDS)).isTrue();
        List<Mono<Record>> meanwhile = new ArrayList<>();
        for (int i = 1; i < 11; i++) {
            meanwhile.add(reads.read(bytes("key" + i), UNLIMITED.lease()).cache());
            meanwhile.getLast().subscribe(null, failure -> { });
        }
        // They wait for the batch being read rather than start another MultiGet beside it.
        assertThat(reads.waiting()).isEqualTo(10);
        firstMayFinish.countDown();

        assertThat(TestStores.text(first.block(WAIT))).isEqualTo("v0");
        List<Record> rest = Flux.concat(meanwhile).collectList().block(WAIT);
        for (int i = 1; i < 11; i++) {
            assertThat(TestStores.text(rest.get(i - 1))).isEqualTo("v" + i);
        }
        assertThat(reads.batchesRead()).isEqualTo(2);
        assertThat(reads.largestBatch()).isEqualTo(10);
    }

    @Test
    void aReadThatComesWhileABatchIsReadTakesAFreeStorageThreadWhenMoreBatchesMayRunAtOnce() throws Exception {
        open(32, DataSize.ofMegabytes(1));
        rocks.write(bytes("slow"), value(1, "1"));
        rocks.write(bytes("fast"), value(1, "2"));
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch firstMayFinish = new CountDownLatch(1);
        Function<List<byte[]>, Record[]> heldFirst = firstBatchHeld(firstStarted, firstMayFinish);
        BatchedReads reads = new BatchedReads(rocks, executor(2), 64, 32, 2, heldFirst);

        Mono<Record> slow = reads.read(bytes("slow"), UNLIMITED.lease()).cache();
        slow.subscribe(null, failure -> { });
        assertThat(firstStarted.await(10, TimeUnit.SECONDS)).isTrue();

        // Answered while the first batch is still being read, on the other storage thread.
        assertThat(TestStores.text(reads.read(bytes("fast"), UNLIMITED.lease()).block(WAIT))).isEqualTo("2");
        firstMayFinish.countDown();
        assertThat(TestStores.text(slow.block(WAIT))).isEqualTo("1");
    }

    @Test
    void readsBeyondTheWaitingBoundAreRejectedAsOverloadAndTheRestAreAnswered() throws Exception {
        open(32, DataSize.ofMegabytes(1));
        for (int i = 0; i < 10; i++) {
            rocks.write(bytes("key" + i), value(1, "v" + i));
        }
        StorageExecutor one = executor(1);
        BatchedReads reads = new BatchedReads(rocks, one, 4, 32, 1);
        CountDownLatch busy = TestStores.occupy(one);

        List<Mono<String>> answers = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Mono<String> answer = reads.read(bytes("key" + i), UNLIMITED.lease()).map(TestStores::text)
                    .onErrorResume(RejectedExecutionException.class, e -> Mono.just("overloaded"))
                    .cache();
            answer.subscribe(null, failure -> { });
            answers.add(answer);
        }
        busy.countDown();

        assertThat(Flux.concat(answers).collectList().block(WAIT)).containsExactly(
                "v0", "v1", "v2", "v3", "overloaded", "overloaded", "overloaded", "overloaded", "overloaded", "overloaded");
        assertThat(reads.waiting()).isZero();
    }

    @Test
    void readsQueuedWhenTheStoreClosesFailAsAGetDoes() throws Exception {
        open(32, DataSize.ofMegabytes(1));
        rocks.write(bytes("k"), value(1, "v"));
        StorageExecutor one = executor(1);
        BatchedReads reads = new BatchedReads(rocks, one, 64, 32, 1);
        CountDownLatch busy = TestStores.occupy(one);
        Mono<Record> queued = reads.read(bytes("k"), UNLIMITED.lease()).cache();
        queued.subscribe(null, failure -> { });

        rocks.close();
        busy.countDown();

        StepVerifier.create(queued).expectError(StoreClosedException.class).verify(WAIT);
        StepVerifier.create(reads.read(bytes("k"), UNLIMITED.lease())).expectError(StoreClosedException.class).verify(WAIT);
        StepVerifier.create(Mono.fromCallable(() -> rocks.get(bytes("k")))).expectError(StoreClosedException.class).verify(WAIT);
    }

    @Test
    void readsFailAsOverloadInsteadOfWaitingForeverOnceTheExecutorIsClosed() {
        open(32, DataSize.ofMegabytes(1));
        StorageExecutor closed = new StorageExecutor(1, 64);
        BatchedReads reads = new BatchedReads(rocks, closed, 64, 32, 1);
        closed.close();

        StepVerifier.create(reads.read(bytes("k"), UNLIMITED.lease()))
                .expectError(RejectedExecutionException.class)
                .verify(WAIT);
        assertThat(reads.waiting()).isZero();
    }

    @Test
    void aReadTheLeaseHasNoRoomForFailsAloneAndTheBatchIsAnswered() throws Exception {
        open(32, DataSize.ofMegabytes(1));
        rocks.write(bytes("small"), value(1, "v"));
        rocks.write(bytes("large"), value(1, "x".repeat(64 * 1024)));
        StorageExecutor one = executor(1);
        BatchedReads reads = new BatchedReads(rocks, one, 64, 32, 1);
        MemoryBudget tight = new MemoryBudget(16 * 1024);
        MemoryBudget.Lease lease = tight.lease();
        CountDownLatch busy = TestStores.occupy(one);

        Mono<Record> large = reads.read(bytes("large"), lease).cache();
        large.subscribe(null, failure -> { });
        Mono<Record> small = reads.read(bytes("small"), lease).cache();
        small.subscribe(null, failure -> { });
        busy.countDown();

        StepVerifier.create(large).expectError(OverBudgetException.class).verify(WAIT);
        assertThat(TestStores.text(small.block(WAIT))).isEqualTo("v");
        assertThat(reads.batchesRead()).isEqualTo(1);
        assertThat(tight.held()).isPositive();
        lease.release();
        assertThat(tight.held()).isZero();
    }

    @Test
    void aLocalStoreGathersTheReadsThatMissMemoryUnlessBatchingIsOff() throws Exception {
        open(32, DataSize.ofMegabytes(1));
        rocks.write(bytes("cold"), value(1, "v"));
        rocks.flush();
        rocks.close();
        for (boolean enabled : new boolean[] {true, false}) {
            rocks = RocksStore.open(TestStores.properties(dir));
            LocalStore store = new LocalStore(rocks, new StorageExecutor(2, 64), 64,
                    new StorageProperties.ReadBatch(enabled, 32, DataSize.ofMegabytes(1), 2));

            assertThat(TestStores.text(store.get(bytes("cold"), UNLIMITED.lease()).block(WAIT))).isEqualTo("v");

            assertThat(store.fileReads()).isEqualTo(1);
            assertThat(store.batchedReads()).isEqualTo(enabled ? 1 : 0);
            store.close();
        }
        rocks = null;
    }

    private static Record expired(long timestamp, long expiresAt, String text) {
        byte[] value = bytes(text);
        byte[] array = new byte[Record.MAX_HEADER_BYTES + value.length];
        System.arraycopy(value, 0, array, Record.MAX_HEADER_BYTES, value.length);
        return Record.expiringValue(new Version(timestamp, 1), 1, expiresAt, array);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Reads as the store does, but the first batch, once it has counted {@code started} down, waits for {@code mayFinish}. */
    private Function<List<byte[]>, Record[]> firstBatchHeld(CountDownLatch started, CountDownLatch mayFinish) {
        return keys -> {
            if (started.getCount() > 0) {
                started.countDown();
                await(mayFinish);
            }
            return rocks.getAll(keys);
        };
    }
}
