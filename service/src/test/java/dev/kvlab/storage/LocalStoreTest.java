package dev.kvlab.storage;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class LocalStoreTest {

    @TempDir
    Path dir;

    RocksStore rocks;
    LocalStore store;

    @BeforeEach
    void open() {
        rocks = RocksStore.open(TestStores.properties(dir));
        store = new LocalStore(rocks, new StorageExecutor(2, 64));
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void storageCallsRunOnTheStorageThreadsNotTheCaller() {
        AtomicReference<String> thread = new AtomicReference<>();

        store.write(bytes("k"), value(1, "v")).doOnSuccess(done -> thread.set(Thread.currentThread().getName())).block();

        assertThat(thread.get()).startsWith("kvlab-storage-");
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
