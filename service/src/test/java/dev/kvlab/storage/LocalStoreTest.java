package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.text;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class LocalStoreTest {

    /** A budget no test here runs out of. */
    static final MemoryBudget UNLIMITED = new MemoryBudget(Long.MAX_VALUE);

    @TempDir
    Path dir;

    RocksStore rocks;
    LocalStore store;

    @BeforeEach
    void open() {
        rocks = RocksStore.open(TestStores.properties(dir));
        store = new LocalStore(rocks, new StorageExecutor(2, 64), 64, StorageProperties.ReadBatch.DEFAULTS);
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void writesRunOnTheStorageThreadsNotTheCaller() {
        AtomicReference<String> thread = new AtomicReference<>();

        store.write(bytes("k"), value(1, "v")).doOnSuccess(done -> thread.set(Thread.currentThread().getName())).block();

        assertThat(thread.get()).startsWith("kvlab-storage-");
    }

    @Test
    void aGetThatRocksDbCanAnswerFromMemoryStaysOnTheCallersThread() {
        rocks.write(bytes("hot"), value(1, "v"));
        AtomicReference<String> thread = new AtomicReference<>();

        Record record = store.get(bytes("hot"), UNLIMITED.lease())
                .doOnNext(found -> thread.set(Thread.currentThread().getName())).block();

        assertThat(text(record)).isEqualTo("v");
        assertThat(thread.get()).isEqualTo(Thread.currentThread().getName());
        assertThat(store.memoryReads()).isEqualTo(1);
        assertThat(store.fileReads()).isZero();
    }

    @Test
    void aLargeRecordInMemoryIsServedOnTheCallingThreadToo() {
        rocks.write(bytes("large"), value(1, "x".repeat(1024 * 1024)));
        AtomicReference<String> thread = new AtomicReference<>();

        Record record = store.get(bytes("large"), UNLIMITED.lease())
                .doOnNext(found -> thread.set(Thread.currentThread().getName())).block();

        assertThat(record.valueLength()).isEqualTo(1024 * 1024);
        assertThat(thread.get()).isEqualTo(Thread.currentThread().getName());
        assertThat(store.memoryReads()).isEqualTo(1);
    }

    @Test
    void aGetThatNeedsAFileRunsOnAStorageThread() {
        rocks.write(bytes("cold"), value(1, "v"));
        rocks.flush();
        store.close();
        rocks = RocksStore.open(TestStores.properties(dir));
        store = new LocalStore(rocks, new StorageExecutor(2, 64), 64, StorageProperties.ReadBatch.DEFAULTS);
        AtomicReference<String> thread = new AtomicReference<>();

        Record record = store.get(bytes("cold"), UNLIMITED.lease())
                .doOnNext(found -> thread.set(Thread.currentThread().getName())).block();

        assertThat(text(record)).isEqualTo("v");
        assertThat(thread.get()).startsWith("kvlab-storage-");
        assertThat(store.fileReads()).isEqualTo(1);
        assertThat(store.memoryReads()).isZero();
    }

    @Test
    void aCancelledRangeClosesItsIterator() {
        for (int i = 0; i < 1000; i++) {
            rocks.write(bytes(String.format("key%04d", i)), value(1, "v"));
        }

        StepVerifier.create(store.range(bytes("key"), null).take(5))
                .expectNextCount(5)
                .verifyComplete();

        assertThat(rocks.openCursors()).isZero();
    }

    @Test
    void aRangeIsReadAsTheSubscriberAsks() {
        for (int i = 0; i < 100; i++) {
            rocks.write(bytes(String.format("key%03d", i)), value(1, "v"));
        }

        StepVerifier.create(store.range(bytes("key"), null), 0)
                .thenRequest(3)
                .expectNextCount(3)
                .expectNoEvent(Duration.ofMillis(50))
                .thenRequest(97)
                .expectNextCount(97)
                .verifyComplete();
        assertThat(rocks.openCursors()).isZero();
    }

    @Test
    void writesThatArriveWhileTheStoreIsBusyAreWrittenTogether() throws Exception {
        StorageExecutor one = new StorageExecutor(1, 64);
        LocalStore grouped = new LocalStore(rocks, one, 1000, StorageProperties.ReadBatch.DEFAULTS);
        CountDownLatch busy = TestStores.occupy(one);

        List<Mono<Void>> writes = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            writes.add(grouped.write(bytes("key" + i), value(1, "v" + i)).cache());
            writes.getLast().subscribe();
        }
        // The 300 writes and the one task queued to write them.
        assertThat(grouped.queuedCalls()).isEqualTo(301);
        busy.countDown();
        Mono.when(writes).block(Duration.ofSeconds(10));

        assertThat(grouped.groupedWrites()).isEqualTo(300);
        assertThat(grouped.writeGroups()).isEqualTo(1);
        assertThat(grouped.queuedCalls()).isZero();
        for (int i = 0; i < 300; i++) {
            assertThat(text(rocks.get(bytes("key" + i)))).isEqualTo("v" + i);
        }
        one.close();
    }

    @Test
    void aWriteWhenIdleLeavesAtOnceAlone() {
        store.write(bytes("a"), value(1, "1")).block(Duration.ofSeconds(5));
        store.write(bytes("b"), value(1, "2")).block(Duration.ofSeconds(5));

        assertThat(store.writeGroups()).isEqualTo(2);
        assertThat(text(rocks.get(bytes("b")))).isEqualTo("2");
    }

    @Test
    void writesBeyondTheWaitingBoundAreRejectedAndTheRestAreStored() throws Exception {
        StorageExecutor one = new StorageExecutor(1, 64);
        LocalStore grouped = new LocalStore(rocks, one, 4, StorageProperties.ReadBatch.DEFAULTS);
        CountDownLatch busy = TestStores.occupy(one);

        List<Mono<Boolean>> writes = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Mono<Boolean> stored = grouped.write(bytes("key" + i), value(1, "v"))
                    .thenReturn(true)
                    .onErrorResume(RejectedExecutionException.class, e -> Mono.just(false))
                    .cache();
            stored.subscribe();
            writes.add(stored);
        }
        busy.countDown();
        List<Boolean> results = Flux.concat(writes).collectList().block(Duration.ofSeconds(10));

        assertThat(results).containsExactly(true, true, true, true, false, false, false, false, false, false);
        assertThat(rocks.get(bytes("key3"))).isNotNull();
        assertThat(rocks.get(bytes("key4"))).isNull();
        one.close();
    }

    @Test
    void writesFailInsteadOfWaitingForeverOnceTheExecutorIsClosed() {
        StorageExecutor closed = new StorageExecutor(1, 64);
        LocalStore grouped = new LocalStore(rocks, closed, 64, StorageProperties.ReadBatch.DEFAULTS);
        closed.close();

        StepVerifier.create(grouped.write(bytes("k"), value(1, "v")))
                .expectError(RejectedExecutionException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(grouped.queuedCalls()).isZero();
    }

    @Test
    void aBatchReadSeesTheWritesBeforeItAndTheNewestOfTwoWritesWins() {
        store.write(bytes("k"), value(1, "old")).block(Duration.ofSeconds(5));
        List<StoreOp> ops = List.of(
                new StoreOp.Read(bytes("k")),
                new StoreOp.Write(bytes("k"), value(3, "newest")),
                new StoreOp.Write(bytes("k"), value(2, "older")),
                new StoreOp.Write(bytes("other"), value(2, "x")),
                new StoreOp.Read(bytes("k")),
                new StoreOp.Read(bytes("absent")));

        List<Outcome> results = store.batch(ops, UNLIMITED.lease()).block(Duration.ofSeconds(5));

        assertThat(text(((Outcome.Found) results.get(0)).record())).isEqualTo("old");
        assertThat(results.subList(1, 4)).containsOnly(Outcome.DONE);
        assertThat(text(((Outcome.Found) results.get(4)).record())).isEqualTo("newest");
        assertThat(results.get(5)).isEqualTo(Outcome.ABSENT);
        assertThat(text(rocks.get(bytes("other")))).isEqualTo("x");
    }

    @Test
    void aReadTheLeaseHasNoRoomForFailsAloneAndHoldsNothing() {
        store.write(bytes("large"), value(1, "x".repeat(1000))).block(Duration.ofSeconds(5));
        store.write(bytes("small"), value(1, "s")).block(Duration.ofSeconds(5));
        MemoryBudget budget = new MemoryBudget(100);
        MemoryBudget.Lease lease = budget.lease();

        List<Outcome> results = store.batch(List.of(new StoreOp.Read(bytes("large")), new StoreOp.Read(bytes("small"))), lease)
                .block(Duration.ofSeconds(5));

        assertThat(((Outcome.Failed) results.get(0)).error()).isInstanceOf(OverBudgetException.class);
        assertThat(text(((Outcome.Found) results.get(1)).record())).isEqualTo("s");
        assertThat(budget.held()).as("only the small record").isEqualTo(14);
        StepVerifier.create(store.get(bytes("large"), lease)).expectError(OverBudgetException.class).verify(Duration.ofSeconds(5));
        lease.release();
        assertThat(budget.held()).isZero();
    }

    @Test
    void everyConcurrentWriteEndsStoredOrRejectedEvenWhenTheQueueIsFull() throws Exception {
        // One thread and room for one task: groups and other calls compete for the slot.
        StorageExecutor crowded = new StorageExecutor(1, 1);
        LocalStore grouped = new LocalStore(rocks, crowded, 100_000, StorageProperties.ReadBatch.DEFAULTS);
        int writers = 4;
        int perWriter = 2_000;
        int readEvery = 50;
        ConcurrentHashMap<String, Boolean> outcomes = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(writers * perWriter);
        // Reads must end too before nothing may be queued: one can hold the queue's slot while
        // the writes after it are rejected at once, and end after the last of them.
        CountDownLatch readsDone = new CountDownLatch(1 + writers * perWriter / readEvery);
        // The run begins with the thread held and the slot taken, so its first writes are
        // rejected; a little later the first writer lets the store go on.
        CountDownLatch held = TestStores.occupy(crowded);
        grouped.onStorage(stored -> stored.get(bytes("slot"))).doFinally(signal -> readsDone.countDown()).subscribe();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < perWriter; i++) {
                    if (writer == 0 && i == perWriter / 10) {
                        held.countDown();
                    }
                    String key = "w" + writer + "-" + i;
                    grouped.write(bytes(key), value(1, key)).subscribe(null,
                            error -> {
                                outcomes.put(key, false);
                                done.countDown();
                            },
                            () -> {
                                outcomes.put(key, true);
                                done.countDown();
                            });
                    if (i % readEvery == 0) {
                        grouped.get(bytes(key), UNLIMITED.lease())
                                .onErrorResume(e -> Mono.empty())
                                .doFinally(signal -> readsDone.countDown())
                                .subscribe();
                    }
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }

        assertThat(done.await(30, TimeUnit.SECONDS)).as("every write ended").isTrue();
        assertThat(readsDone.await(30, TimeUnit.SECONDS)).as("every read ended").isTrue();
        assertThat(outcomes).hasSize(writers * perWriter);
        outcomes.forEach((key, stored) -> {
            if (stored) {
                assertThat(rocks.get(bytes(key))).as(key).isNotNull();
            }
        });
        assertThat(outcomes.get("w0-0")).as("a write while the store is full").isFalse();
        assertThat(grouped.queuedCalls()).isZero();
        // Nothing is left stuck: once the crowd is gone, a write is stored. (How many of the
        // crowd's were is up to the scheduler: on two cores the writers may take them all in one
        // time slice of the storage thread.)
        grouped.write(bytes("after"), value(1, "after")).block(Duration.ofSeconds(10));
        assertThat(text(rocks.get(bytes("after")))).isEqualTo("after");
        crowded.close();
    }

    @Test
    void aFullQueueRejectsWorkInsteadOfQueueingWithoutBound() {
        StorageExecutor tiny = new StorageExecutor(1, 1);
        try {
            Mono<Boolean> slow = Mono.fromCallable(() -> {
                Thread.sleep(200);
                return true;
            }).subscribeOn(tiny.scheduler());

            Flux<Boolean> burst = Flux.range(0, 5).flatMap(i -> slow.onErrorResume(RejectedExecutionException.class, e -> Mono.just(false)));

            assertThat(burst.collectList().block()).contains(false);
        } finally {
            tiny.close();
        }
    }
}
