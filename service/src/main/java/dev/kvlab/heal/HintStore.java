package dev.kvlab.heal;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.MissedWrites;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Hints: the writes a peer missed (its call failed or timed out), kept in the store's
 * {@code hints} column family until {@link HintReplayer} has replayed them, so they outlive a
 * restart of this node. A hint never counts toward a write's {@code ack}: it is kept after the
 * call failed, whatever the client was told.
 *
 * <p>Bounded: a peer gets at most {@code maxBytesPerPeer} of hints, and none once it has missed
 * writes for longer than {@code window} (repair brings it up to date); a hint the node's memory
 * budget has no room for on its way to the store is dropped. Dropped hints are counted. Hints are
 * written in groups, one storage task and one RocksDB write for what came meanwhile.
 */
public final class HintStore implements MissedWrites {

    private static final Logger log = LoggerFactory.getLogger(HintStore.class);
    /** Hints read from the store at a time while a replay step is taken: few, as each may be a large value. */
    private static final int READ_PAGE = 8;

    private final LocalStore store;
    private final MemoryBudget budget;
    private final HealingProperties.Hints limits;
    private final LongSupplier wallMillis;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Pending> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushing = new AtomicBoolean();
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong written = new AtomicLong();

    public HintStore(LocalStore store, MemoryBudget budget, HealingProperties.Hints limits, LongSupplier wallMillis) {
        this.store = store;
        this.budget = budget;
        this.limits = limits;
        this.wallMillis = wallMillis;
    }

    /** Counts the hints left from before a restart, peer by peer. */
    public void load() {
        byte[] start = new byte[0];
        while (true) {
            byte[] from = start;
            List<Map.Entry<byte[], byte[]>> page = store.onStorage(rocks -> rocks.hints().scan(from, null, 4096)).block();
            if (page == null || page.isEmpty()) {
                return;
            }
            for (Map.Entry<byte[], byte[]> entry : page) {
                Hint hint = Hint.decode(entry.getKey(), entry.getValue());
                peer(hint.node()).counted(entry.getValue().length, hint.time());
            }
            start = successor(page.getLast().getKey());
        }
    }

    @Override
    public void missed(String node, byte[] key, Record record) {
        if (!limits.enabled()) {
            return;
        }
        Peer peer = peer(node);
        long now = wallMillis.getAsLong();
        if (peer.missingSince(now) < now - limits.window().toMillis()) {
            dropped.incrementAndGet();
            return;
        }
        byte[] value = Hint.encodeValue(node, key, record);
        if (peer.bytes.get() + value.length > limits.maxBytesPerPeer().toBytes()) {
            dropped.incrementAndGet();
            return;
        }
        MemoryBudget.Lease lease = budget.lease();
        if (!lease.tryHold(value.length)) {
            dropped.incrementAndGet();
            return;
        }
        byte[] id = ByteBuffer.allocate(Hint.ID_BYTES).putLong(nodeKey(node)).putLong(now).putLong(sequence.incrementAndGet()).array();
        waiting.add(new Pending(peer, id, value, now, lease));
        flush();
    }

    /** Writes what waits in one storage task, unless one is on its way already. */
    private void flush() {
        if (waiting.isEmpty() || !flushing.compareAndSet(false, true)) {
            return;
        }
        List<Pending> group = new ArrayList<>();
        Pending next;
        while ((next = waiting.poll()) != null) {
            group.add(next);
        }
        List<Map.Entry<byte[], byte[]>> entries = group.stream().map(pending -> Map.entry(pending.id(), pending.value())).toList();
        store.onStorage(rocks -> {
                    rocks.hints().putAll(entries);
                    return group.size();
                })
                .doFinally(signal -> {
                    group.forEach(pending -> pending.lease().release());
                    flushing.set(false);
                    flush();
                })
                .subscribe(count -> {
                            written.addAndGet(count);
                            group.forEach(pending -> pending.peer().counted(pending.value().length, pending.time()));
                        },
                        error -> {
                            dropped.addAndGet(group.size());
                            log.warn("could not keep {} hints: {}", group.size(), error.toString());
                        });
    }

    /**
     * The oldest hints of {@code node}, about {@code maxBytes} of them (at least one), each held on
     * {@code lease} as it is read: read a few at a time, they stop where the lease has no room, and
     * fail with {@link dev.kvlab.memory.OverBudgetException} when it has none for the first.
     */
    Mono<List<Hint>> oldest(String node, long maxBytes, MemoryBudget.Lease lease) {
        byte[] prefix = ByteBuffer.allocate(8).putLong(nodeKey(node)).array();
        byte[] end = successor8(prefix);
        return store.onStorage(rocks -> {
            List<Hint> hints = new ArrayList<>();
            long bytes = 0;
            byte[] from = prefix;
            while (true) {
                List<Map.Entry<byte[], byte[]>> page = rocks.hints().scan(from, end, READ_PAGE);
                for (Map.Entry<byte[], byte[]> entry : page) {
                    int size = entry.getValue().length;
                    if (!hints.isEmpty() && bytes + size > maxBytes || !lease.tryHold(size)) {
                        if (hints.isEmpty()) {
                            throw lease.overBudget();
                        }
                        return hints;
                    }
                    Hint hint = Hint.decode(entry.getKey(), entry.getValue());
                    if (hint.node().equals(node)) {
                        hints.add(hint);
                        bytes += size;
                    }
                }
                if (page.size() < READ_PAGE) {
                    return hints;
                }
                // The next page starts just after this one's last key.
                from = Arrays.copyOf(page.getLast().getKey(), page.getLast().getKey().length + 1);
            }
        });
    }

    /** Forgets hints that were replayed (or whose peer left the cluster). */
    Mono<Void> remove(String node, List<Hint> hints) {
        return store.onStorage(rocks -> {
            rocks.hints().deleteAll(hints.stream().map(Hint::id).toList());
            return hints;
        }).doOnNext(removed -> {
            Peer peer = peer(node);
            removed.forEach(hint -> peer.removed(hint.encodedBytes(), hint.time()));
        }).then();
    }

    /** The peers with hints kept for them now, and how many. */
    public Map<String, PeerHints> pending() {
        Map<String, PeerHints> pending = new TreeMap<>();
        peers.forEach((node, peer) -> {
            if (peer.count.get() > 0) {
                pending.put(node, new PeerHints(peer.count.get(), peer.bytes.get(), peer.oldest.get()));
            }
        });
        return pending;
    }

    /** The hints kept for {@code node} now: none when it has none. */
    public PeerHints pendingFor(String node) {
        Peer peer = peers.get(node);
        return peer == null ? new PeerHints(0, 0, 0) : new PeerHints(peer.count.get(), peer.bytes.get(), peer.oldest.get());
    }

    /** Hints that were not kept: the peer's share was full, it had been away too long, or memory was short. */
    public long dropped() {
        return dropped.get();
    }

    /** Hints kept since the node started. */
    public long written() {
        return written.get();
    }

    /** Hints kept and not replayed yet, over all peers. */
    public long pendingCount() {
        return peers.values().stream().mapToLong(peer -> peer.count.get()).sum();
    }

    private Peer peer(String node) {
        return peers.computeIfAbsent(node, unused -> new Peer());
    }

    /** Where a node's hints are kept: their keys begin with this hash of its name. */
    private static long nodeKey(String node) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : node.getBytes(StandardCharsets.UTF_8)) {
            hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
        }
        return hash;
    }

    /** The smallest key after every key that starts with {@code prefix}, an 8-byte hash. */
    private static byte[] successor8(byte[] prefix) {
        long next = ByteBuffer.wrap(prefix).getLong() + 1;
        return next == Long.MIN_VALUE ? null : ByteBuffer.allocate(8).putLong(next).array();
    }

    /** The smallest key after {@code key}. */
    private static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    /** What is kept for one peer: counted as hints are written and removed. */
    private static final class Peer {
        final AtomicLong count = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        /** Time of its oldest hint kept; 0 when none. */
        final AtomicLong oldest = new AtomicLong();

        void counted(long size, long time) {
            count.incrementAndGet();
            bytes.addAndGet(size);
            oldest.accumulateAndGet(time, (current, given) -> current == 0 ? given : Math.min(current, given));
        }

        /** A hint kept at {@code time} is gone; those left are no older (hints go oldest first). */
        void removed(long size, long time) {
            if (count.decrementAndGet() <= 0) {
                count.set(0);
                bytes.set(0);
                oldest.set(0);
            } else {
                bytes.addAndGet(-size);
                oldest.accumulateAndGet(time, (current, removed) -> current == 0 ? 0 : Math.max(current, removed));
            }
        }

        /** Since when the peer has missed writes: its oldest hint kept, or now when it has none. */
        long missingSince(long now) {
            long since = oldest.get();
            return since == 0 ? now : since;
        }
    }

    private record Pending(Peer peer, byte[] id, byte[] value, long time, MemoryBudget.Lease lease) {
    }

    /** What is kept for a peer: hints, their bytes, and the time of the oldest (ms since the epoch). */
    public record PeerHints(long count, long bytes, long oldestMillis) {
    }
}
