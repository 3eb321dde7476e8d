package dev.kvlab.heal;

import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.RocksStore;
import dev.kvlab.storage.TrackedSnapshot;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Every record of the store, as keys and headers in key order, read in pages on the storage
 * scheduler and paced to at most {@code keysPerSecond}: the background work's view of the store
 * (repair, handoff, tombstones), which neither copies values nor fills the block cache.
 */
final class HeaderScan {

    /**
     * Keys read in one storage task. A page holds the storage thread it runs on, and client
     * requests wait behind it: 1024 keys took about 1.3 ms, 128 take a tenth of a millisecond or so.
     */
    static final int PAGE = 128;

    private final LocalStore store;
    private final int keysPerSecond;
    /** Records read, by scans and by {@link #paced} reads: what the node's background work read. */
    private final LongAdder read;

    HeaderScan(LocalStore store, int keysPerSecond) {
        this(store, keysPerSecond, new LongAdder());
    }

    HeaderScan(LocalStore store, int keysPerSecond, LongAdder read) {
        this.store = store;
        this.keysPerSecond = keysPerSecond;
        this.read = read;
    }

    /** The whole store, a page at a time as the subscriber asks. */
    Flux<RecordHeader.Keyed> all() {
        return pages((rocks, start) -> rocks.headers(start, PAGE));
    }

    /** The whole store as it was at {@code at}, a page at a time as the subscriber asks. */
    Flux<RecordHeader.Keyed> all(TrackedSnapshot at) {
        return pages((rocks, start) -> rocks.headers(start, PAGE, at));
    }

    private Flux<RecordHeader.Keyed> pages(BiFunction<RocksStore, byte[], List<RecordHeader.Keyed>> page) {
        AtomicReference<byte[]> next = new AtomicReference<>(new byte[0]);
        return Mono.defer(() -> {
                    byte[] start = next.get();
                    return store.onStorage(rocks -> page.apply(rocks, start));
                })
                .doOnNext(found -> next.set(found.size() < PAGE ? null : successor(found.getLast().key())))
                .delayUntil(found -> Mono.delay(pause(found.size())))
                .repeat(() -> next.get() != null)
                .concatMapIterable(found -> found)
                .doOnNext(record -> read.increment());
    }

    /**
     * {@code work} on a storage thread, counted as {@code records} records read and paced as a
     * page of them: for reads of chosen keys, at the scan's rate.
     */
    <T> Mono<T> paced(int records, Function<RocksStore, T> work) {
        return paced(records, 0, work);
    }

    /** As {@link #paced(int, Function)}, at {@code atLeastPerSecond} records a second when that is faster than the scan's rate. */
    <T> Mono<T> paced(int records, double atLeastPerSecond, Function<RocksStore, T> work) {
        Duration pause = atLeastPerSecond > keysPerSecond ? Duration.ofNanos((long) (records * 1e9 / atLeastPerSecond)) : pause(records);
        return store.onStorage(work).doOnNext(done -> read.add(records)).delayUntil(done -> Mono.delay(pause));
    }

    /** Records read so far. */
    long read() {
        return read.sum();
    }

    /** How long {@code keys} keys take at the scan's rate. */
    private Duration pause(int keys) {
        return Duration.ofNanos(keys * 1_000_000_000L / keysPerSecond);
    }

    /** The smallest key after {@code key}. */
    static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }
}
