package dev.kvlab.heal;

import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.RecordHeader;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
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

    HeaderScan(LocalStore store, int keysPerSecond) {
        this.store = store;
        this.keysPerSecond = keysPerSecond;
    }

    /** The whole store, a page at a time as the subscriber asks. */
    Flux<RecordHeader.Keyed> all() {
        AtomicReference<byte[]> next = new AtomicReference<>(new byte[0]);
        return Mono.defer(() -> {
                    byte[] start = next.get();
                    return store.onStorage(rocks -> rocks.headers(start, PAGE));
                })
                .doOnNext(page -> next.set(page.size() < PAGE ? null : successor(page.getLast().key())))
                .delayUntil(page -> Mono.delay(pause(page)))
                .repeat(() -> next.get() != null)
                .concatMapIterable(page -> page);
    }

    /** How long a page of keys takes at the scan's rate. */
    private Duration pause(List<RecordHeader.Keyed> page) {
        return Duration.ofNanos(page.size() * 1_000_000_000L / keysPerSecond);
    }

    /** The smallest key after {@code key}. */
    static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }
}
