package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.storage.ChangedKeys;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.StoreClosedException;
import dev.kvlab.storage.TrackedSnapshot;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The bucket hashes ({@link RepairBuckets}) of the records this node shares with each peer, kept
 * up to date as records change, so a round reads only the records that changed since the last
 * one, and none when nothing changed.
 *
 * <p>The hashes are those of the records as they were at a RocksDB snapshot S, under one topology.
 * The store keeps the keys of every record that changes after S ({@link dev.kvlab.storage.ChangedKeys}:
 * writes, deletes, purges, reaping). To bring the hashes up to date, a new snapshot S' is taken (the
 * store starts a new set of keys with it), and for each key changed since S its record at S is
 * taken out of the hashes and its record at S' put in (XOR both ways); then S is released. The
 * first request, one under another topology, or one after more keys changed than the set keeps,
 * hashes every record at a fresh snapshot instead (a full scan), which starts the keeping anew.
 *
 * <p>One update runs at a time: requests that arrive meanwhile wait and are answered together by
 * the next one, which takes its snapshot after they asked, so every answer covers every change
 * stored before its request (a round's start, which tombstones count on).
 */
final class MaintainedBucketHashes implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MaintainedBucketHashes.class);
    /** Requests waiting at the most; past it one fails (a round tries again later). */
    static final int MAX_WAITING = 256;
    /** What reading one changed key at two snapshots costs, in headers scanned ({@link #cheaperThanAScan}). */
    static final int SCANNED_PER_CHANGED_KEY = 20;

    /** What the hashes are kept for: the topology's nodes, this node's name, and the buckets. */
    record Basis(List<String> nodes, String self, int buckets) {
    }

    /**
     * The hashes a request asked for, and the records read to bring them up to date; the
     * generation (the number of the update) they were taken at; if asked, the keys changed
     * recently with their headers then ({@link RecentChanges}, null headers where none), and the
     * headers of the keys asked for at the generation asked for.
     */
    record Answer(long[] hashes, long recordsRead, long generation, List<RecordHeader.Keyed> recent, List<Looked> looked) {
        Answer(long[] hashes, long recordsRead) {
            this(hashes, recordsRead, 0, List.of(), List.of());
        }
    }

    /** A key's header at a generation, when the changes kept tell it ({@code known}); null when it had none. */
    record Looked(byte[] key, boolean known, RecordHeader header) {
    }

    /**
     * Beside the hashes: whether to send the recent changes, those after update {@code since} (0: all
     * kept), and the keys to look up at {@code generation}.
     */
    record Ask(boolean recent, long since, List<byte[]> keys, long generation) {
        static final Ask HASHES = new Ask(false, 0, List.of(), 0);

        /** The keys changed after update {@code since} beside the hashes. */
        static Ask recentSince(long since) {
            return new Ask(true, since, List.of(), 0);
        }

        /** The headers of {@code keys} at update {@code generation} beside the hashes. */
        static Ask lookUp(List<byte[]> keys, long generation) {
            return new Ask(false, 0, keys, generation);
        }
    }

    /** The hashes of the records at {@code at} (taken at {@code takenNanos}), by peer; a peer with no shared record has none. */
    private record Summary(Basis basis, TrackedSnapshot at, long takenNanos, Map<String, long[]> byPeer) {
        long[] hashesFor(String peer) {
            long[] hashes = byPeer.get(peer);
            return hashes == null ? new long[basis.buckets()] : hashes.clone();
        }
    }

    private record Waiter(Basis basis, String peer, Ask ask, MonoSink<Answer> sink) {
    }

    private final LocalStore store;
    private final HeaderScan scan;
    private final long maxChangedBytes;
    private final RecentChanges recent;
    /**
     * The number of the update the summary is at: one more for each new snapshot. It starts at the
     * wall clock's milliseconds, so that a number a peer kept from before this node restarted is
     * below every number after: asked for the changes since it, the node sends all it keeps.
     */
    private long generation = System.currentTimeMillis();
    private final int scannedPerChangedKey;
    private final Deque<Waiter> waiting = new ArrayDeque<>();
    private final AtomicLong rebuilds = new AtomicLong();
    /** Snapshots whose release the storage executor refused (its queue was full): released by the next update. */
    private final ConcurrentLinkedQueue<TrackedSnapshot> unreleased = new ConcurrentLinkedQueue<>();
    /** Read and replaced by the one update running. */
    private volatile Summary summary;
    private boolean busy;
    private boolean closed;

    /** {@code maxChangedBytes}: what the keys changed between two updates may take ({@link dev.kvlab.storage.ChangedKeys}). */
    MaintainedBucketHashes(LocalStore store, HeaderScan scan, long maxChangedBytes) {
        this(store, scan, maxChangedBytes, SCANNED_PER_CHANGED_KEY);
    }

    /** {@code scannedPerChangedKey}: see {@link #cheaperThanAScan}; 0 never scans while the changes fit. */
    MaintainedBucketHashes(LocalStore store, HeaderScan scan, long maxChangedBytes, int scannedPerChangedKey) {
        this.store = store;
        this.scan = scan;
        this.maxChangedBytes = maxChangedBytes;
        this.scannedPerChangedKey = scannedPerChangedKey;
        // As much again for the keys changed in the last updates: enough to cover the time from one
        // round with a peer to the next under a steady write load, so those rounds compare changed
        // keys only; kept for a quarter of it, they covered 2 s of 8 000 writes a second, less than
        // that time, and the rounds scanned the store.
        this.recent = new RecentChanges(maxChangedBytes);
    }

    /** The hashes of the records {@code self} holds that both it and {@code peer} own, up to date now. */
    Mono<Answer> hashes(Basis basis, String peer) {
        return hashes(basis, peer, Ask.HASHES);
    }

    /** As {@link #hashes(Basis, String)}, with what {@code ask} asks beside them, all at one snapshot. */
    Mono<Answer> hashes(Basis basis, String peer, Ask ask) {
        return Mono.create(sink -> {
            boolean start;
            synchronized (waiting) {
                if (closed) {
                    sink.error(new IllegalStateException("the node is stopping"));
                    return;
                }
                if (waiting.size() >= MAX_WAITING) {
                    sink.error(new IllegalStateException(MAX_WAITING + " repair requests already wait for the bucket hashes"));
                    return;
                }
                waiting.add(new Waiter(basis, peer, ask, sink));
                start = !busy;
                busy = true;
            }
            if (start) {
                next();
            }
        });
    }

    /** Builds the hashes for {@code basis} in the background (at start), so the first round finds them. */
    void prepare(Basis basis) {
        hashes(basis, null).subscribe(answer -> { }, error -> log.debug("preparing the repair hashes failed: {}", error.toString()));
    }

    /** Answers the waiters of one basis with one update, then the next ones. */
    private void next() {
        List<Waiter> batch = new ArrayList<>();
        Basis basis;
        synchronized (waiting) {
            if (waiting.isEmpty() || closed) {
                busy = false;
                waiting.forEach(waiter -> waiter.sink().error(new IllegalStateException("the node is stopping")));
                waiting.clear();
                return;
            }
            basis = waiting.peek().basis();
            for (Iterator<Waiter> it = waiting.iterator(); it.hasNext(); ) {
                Waiter waiter = it.next();
                if (waiter.basis().equals(basis)) {
                    batch.add(waiter);
                    it.remove();
                }
            }
        }
        update(basis).flatMap(read -> answers(batch, read)).subscribe(
                answers -> {
                    for (int i = 0; i < batch.size(); i++) {
                        batch.get(i).sink().success(answers.get(i));
                    }
                    next();
                },
                error -> {
                    batch.forEach(waiter -> waiter.sink().error(error));
                    next();
                });
    }

    /** The waiters' answers from the summary brought up to date, reading the keys they look up that did not change. */
    private Mono<List<Answer>> answers(List<Waiter> batch, long read) {
        Summary now = summary;
        long at = generation;
        return Flux.fromIterable(batch)
                .concatMap(waiter -> lookUp(waiter.ask(), now)
                        .map(looked -> new Answer(waiter.peer() == null ? null : now.hashesFor(waiter.peer()), read, at,
                                waiter.ask().recent() ? recent.keysSince(waiter.ask().since() <= at ? waiter.ask().since() : 0) : List.of(),
                                looked)))
                .collectList();
    }

    /** The headers of the keys {@code ask} looks up at its generation, read at the summary's snapshot where unchanged since. */
    private Mono<List<Looked>> lookUp(Ask ask, Summary now) {
        if (ask.keys().isEmpty()) {
            return Mono.just(List.of());
        }
        List<Looked> looked = new ArrayList<>(ask.keys().size());
        List<Integer> unchanged = new ArrayList<>();
        for (byte[] key : ask.keys()) {
            RecentChanges.At at = recent.at(key, ask.generation());
            if (at.read()) {
                unchanged.add(looked.size());
            }
            looked.add(new Looked(key, at.known(), at.header()));
        }
        if (unchanged.isEmpty()) {
            return Mono.just(looked);
        }
        return Flux.fromIterable(unchanged)
                .buffer(HeaderScan.PAGE)
                .concatMap(page -> {
                    List<byte[]> keys = page.stream().map(i -> looked.get(i).key()).toList();
                    return scan.paced(page.size(), rocks -> rocks.headersOf(keys, now.at()))
                            .doOnNext(headers -> {
                                for (int i = 0; i < page.size(); i++) {
                                    looked.set(page.get(i), new Looked(keys.get(i), true, headers[i]));
                                }
                            });
                })
                .then(Mono.just(looked));
    }

    /** Brings the summary up to date for {@code basis}; the records read. */
    private Mono<Long> update(Basis basis) {
        Summary old = summary;
        boolean sameBasis = old != null && old.basis().equals(basis);
        return store.onStorage(rocks -> {
                    for (TrackedSnapshot left; (left = unreleased.poll()) != null; ) {
                        rocks.release(left);
                    }
                    return new Started(rocks.trackChanges(maxChangedBytes, sameBasis ? old.at() : null), System.nanoTime(),
                            rocks.longProperty("rocksdb.estimate-num-keys"));
                })
                .flatMap(started -> {
                    TrackedSnapshot next = started.at();
                    if (sameBasis && next == old.at()) {
                        return Mono.just(0L); // nothing changed since
                    }
                    summary = null; // not an answer until brought up to date
                    generation++;
                    boolean incremental = sameBasis && cheaperThanAScan(old.at().changes(), started.estimatedKeys());
                    if (!incremental && sameBasis) {
                        ChangedKeys changes = old.at().changes();
                        log.info("the repair hashes are built anew by a scan of the store: {} since the last update, against some {} keys stored",
                                changes.overflowed() ? "more keys changed than changed-keys-memory holds" : changes.size() + " keys changed",
                                started.estimatedKeys());
                    }
                    Mono<Long> done = incremental ? applyChanges(old, next, started.takenNanos()) : rebuild(basis, next, started.takenNanos());
                    return done
                            .doOnNext(read -> {
                                if (old != null) {
                                    release(old.at());
                                }
                            })
                            .doOnError(error -> {
                                if (old != null) {
                                    release(old.at());
                                }
                                release(next);
                                stopTracking();
                            });
                });
    }

    /** A new snapshot, and how many keys RocksDB estimates the store holds. */
    private record Started(TrackedSnapshot at, long takenNanos, long estimatedKeys) {
    }

    /**
     * Whether reading the changed keys again costs less than a scan of every key: each costs two
     * point reads, which RocksDB serves from a block it finds and decompresses for the key alone,
     * where a scan reads on in the same block. Measured over 1M keys of 100 bytes, {@value #SCANNED_PER_CHANGED_KEY}
     * headers scanned cost about what one changed key does.
     */
    private boolean cheaperThanAScan(ChangedKeys changes, long estimatedKeys) {
        return !changes.overflowed() && (long) changes.size() * scannedPerChangedKey <= Math.max(estimatedKeys, 1024);
    }

    /** Changed keys with their records' headers at the old snapshot and the new, null where a key had none. */
    private record Reread(List<byte[]> keys, RecordHeader[] before, RecordHeader[] after) {
    }

    /**
     * The changes since {@code old}'s snapshot applied to its hashes, which then are those at {@code next}.
     * The changed keys are read again at the scan's rate, or faster when they came faster: at least
     * in half the time they took to come. Read more slowly, the changes of a steady write load would
     * pile up from one update to the next until they cost more than a scan, and every update would
     * then read the whole store.
     */
    private Mono<Long> applyChanges(Summary old, TrackedSnapshot next, long nextTakenNanos) {
        Ownership ownership = new Ownership(old.basis().nodes());
        List<byte[]> keys = old.at().changes().keys();
        Map<String, long[]> byPeer = old.byPeer(); // changed in place: no answer reads it meanwhile
        double cameIn = Math.max(nextTakenNanos - old.takenNanos(), 1_000_000) / 1e9;
        double readsPerSecond = 2 * 2 * keys.size() / cameIn;
        return Flux.fromIterable(keys)
                .buffer(HeaderScan.PAGE)
                .concatMap(page -> scan.paced(2 * page.size(), readsPerSecond,
                        rocks -> new Reread(page, rocks.headersOf(page, old.at()), rocks.headersOf(page, next))))
                .doOnNext(read -> {
                    for (int i = 0; i < read.keys().size(); i++) {
                        if (!Objects.equals(read.before()[i], read.after()[i])) {
                            toggle(byPeer, ownership, old.basis(), read.keys().get(i), read.before()[i]);
                            toggle(byPeer, ownership, old.basis(), read.keys().get(i), read.after()[i]);
                        }
                        recent.changed(read.keys().get(i), read.before()[i], read.after()[i], generation);
                    }
                })
                .then(Mono.fromSupplier(() -> {
                    summary = new Summary(old.basis(), next, nextTakenNanos, byPeer);
                    return 2L * keys.size();
                }));
    }

    /** The hashes of every record at {@code at}, read in a full scan. */
    private Mono<Long> rebuild(Basis basis, TrackedSnapshot at, long takenNanos) {
        rebuilds.incrementAndGet();
        recent.reset(generation);
        Ownership ownership = new Ownership(basis.nodes());
        Map<String, long[]> byPeer = new HashMap<>();
        return scan.all(at)
                .reduce(0L, (read, record) -> {
                    toggle(byPeer, ownership, basis, record.key(), record.header());
                    return read + 1;
                })
                .doOnNext(read -> summary = new Summary(basis, at, takenNanos, byPeer));
    }

    /** Adds or takes out the record {@code header} of {@code key} in the hashes of each peer that owns it with this node. */
    private static void toggle(Map<String, long[]> byPeer, Ownership ownership, Basis basis, byte[] key, RecordHeader header) {
        if (header == null) {
            return;
        }
        List<String> owners = ownership.ownersOf(key, header.from());
        if (!owners.contains(basis.self())) {
            return;
        }
        for (String owner : owners) {
            if (!owner.equals(basis.self())) {
                RepairBuckets.toggle(byPeer.computeIfAbsent(owner, unused -> new long[basis.buckets()]), key, header);
            }
        }
    }

    /** After a failure: the hashes are built anew next time; the store keeps no keys meanwhile. */
    private void stopTracking() {
        store.onStorage(rocks -> {
            rocks.stopTracking();
            return true;
        }).subscribe(done -> { }, error -> { });
    }

    /** Releases the snapshot on a storage thread; with the storage queue full, in the next update's first task. */
    private void release(TrackedSnapshot snapshot) {
        store.onStorage(rocks -> {
            rocks.release(snapshot);
            return true;
        }).subscribe(done -> { }, error -> {
            if (!(error instanceof StoreClosedException)) {
                unreleased.add(snapshot);
            }
        });
    }

    /** Full scans the hashes took so far (at start, after a topology change, after too many changes). */
    long rebuilds() {
        return rebuilds.get();
    }

    @Override
    public void close() {
        synchronized (waiting) {
            closed = true;
        }
    }
}
