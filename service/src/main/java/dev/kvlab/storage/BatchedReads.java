package dev.kvlab.storage;

import dev.kvlab.memory.MemoryBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Point reads that RocksDB's memory could not answer, read together, as {@link GroupCommit} writes
 * writes: a read that arrives while a batch is being read waits and leaves with the next, in one
 * storage task and one MultiGet, so a burst of reads pays one hand-off to a storage thread (one
 * wake-up) instead of one each. Idle, a read leaves at once, alone; under load batches grow without
 * a timer adding latency. Up to {@code maxBatchesAtOnce} batches are read at once, on as many
 * storage threads, so a read finds one free as a single read would. A batch reads at most {@code maxKeys} keys, and one MultiGet answers at
 * most the batch's bytes ({@link StorageProperties.ReadBatch#maxBytes}). At most {@code maxWaiting}
 * reads wait; beyond that a read is rejected at once, as a full storage queue rejects any other call.
 */
final class BatchedReads {

    private final RocksStore store;
    private final StorageExecutor executor;
    private final int maxWaiting;
    private final int maxKeys;
    /** How a batch's keys are read: {@link RocksStore#getAll}, or a test's wrapper around it. */
    private final Function<List<byte[]>, Record[]> multiGet;
    private final Queue<Pending> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger waitingCount = new AtomicInteger();
    /** Batches read at once at most: more keep storage threads idle while reads wait, fewer batch less. */
    private final int maxBatchesAtOnce;
    /** Tasks that read a batch, queued or running; at most {@code maxBatchesAtOnce}. */
    private final AtomicInteger batchesAtOnce = new AtomicInteger();
    private final AtomicLong batchesRead = new AtomicLong();
    private final AtomicLong readsBatched = new AtomicLong();
    private final AtomicInteger largestBatch = new AtomicInteger();
    private final AtomicLong largestBatchBytes = new AtomicLong();

    BatchedReads(RocksStore store, StorageExecutor executor, int maxWaiting, int maxKeys, int maxBatchesAtOnce) {
        this(store, executor, maxWaiting, maxKeys, maxBatchesAtOnce, store::getAll);
    }

    BatchedReads(RocksStore store, StorageExecutor executor, int maxWaiting, int maxKeys, int maxBatchesAtOnce,
                 Function<List<byte[]>, Record[]> multiGet) {
        this.store = store;
        this.executor = executor;
        this.maxWaiting = maxWaiting;
        this.maxKeys = maxKeys;
        this.maxBatchesAtOnce = maxBatchesAtOnce;
        this.multiGet = multiGet;
    }

    /**
     * The record under {@code key}, as {@link RocksStore#get} reads it, held on {@code lease}
     * ({@link LocalStore#held}); completes on a storage thread.
     */
    Mono<Record> read(byte[] key, MemoryBudget.Lease lease) {
        return Mono.create(sink -> {
            if (waitingCount.incrementAndGet() > maxWaiting) {
                waitingCount.decrementAndGet();
                sink.error(new RejectedExecutionException(maxWaiting + " reads are already waiting for the store"));
                return;
            }
            Pending pending = new Pending(key, lease, sink);
            // A read given up before its batch is read is left out of it: nothing holds its record.
            sink.onCancel(() -> pending.cancelled = true);
            waiting.add(pending);
            schedule();
        });
    }

    /** Reads waiting for a batch now, for metrics. */
    int waiting() {
        return waitingCount.get();
    }

    /** MultiGets run so far, for metrics: with {@link #readsBatched()}, how many reads a batch carries. */
    long batchesRead() {
        return batchesRead.get();
    }

    /** Reads that left in batches so far, for metrics. */
    long readsBatched() {
        return readsBatched.get();
    }

    /** The most keys one batch has read so far. */
    int largestBatch() {
        return largestBatch.get();
    }

    /** The most bytes of records one MultiGet has answered so far. */
    long largestBatchBytes() {
        return largestBatchBytes.get();
    }

    /**
     * Queues a task to read the next batch, unless {@code maxBatchesAtOnce} are queued or running.
     * Each read leaves the queue once (a batch's task or a failure polls it), so they never race for one.
     */
    private void schedule() {
        while (!waiting.isEmpty()) {
            int atOnce = batchesAtOnce.get();
            if (atOnce >= maxBatchesAtOnce) {
                return; // a running batch schedules the next when it is done
            }
            if (!batchesAtOnce.compareAndSet(atOnce, atOnce + 1)) {
                continue;
            }
            try {
                executor.execute(this::readNextBatch);
                return;
            } catch (RejectedExecutionException e) {
                // The executor is full or closed: nothing would read what waits, so fail it.
                failWaiting(e);
                batchesAtOnce.decrementAndGet();
            }
        }
    }

    private void readNextBatch() {
        List<Pending> batch = nextBatch();
        Record[] found = null;
        RuntimeException failure = null;
        if (!batch.isEmpty()) {
            try {
                found = multiGet.apply(batch.stream().map(Pending::key).toList());
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        // Reads that came meanwhile leave in a task of their own, before this batch's callers go
        // on with their work on this thread.
        batchesAtOnce.decrementAndGet();
        schedule();
        if (failure != null) {
            for (Pending pending : batch) {
                pending.sink.error(failure);
            }
            return;
        }
        if (batch.isEmpty()) {
            return;
        }
        counted(batch.size(), found);
        // The records MultiGet read first; then each key it has no value for, read alone, one at
        // a time, so that keys left out by the byte limit are never all held at once.
        for (int i = 0; i < batch.size(); i++) {
            if (found[i] != null) {
                answer(batch.get(i), found[i]);
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            if (found[i] == null) {
                Pending pending = batch.get(i);
                Record record;
                try {
                    record = store.get(pending.key);
                } catch (RuntimeException e) {
                    pending.sink.error(e);
                    continue;
                }
                answer(pending, record);
            }
        }
    }

    private void counted(int keys, Record[] found) {
        long bytes = 0;
        for (Record record : found) {
            if (record != null) {
                bytes += record.encoded().length;
            }
        }
        batchesRead.incrementAndGet();
        readsBatched.addAndGet(keys);
        largestBatch.accumulateAndGet(keys, Math::max);
        largestBatchBytes.accumulateAndGet(bytes, Math::max);
    }

    private static void answer(Pending pending, Record record) {
        if (pending.cancelled) {
            return;
        }
        Record held;
        try {
            held = LocalStore.held(record, pending.lease);
        } catch (RuntimeException e) {
            pending.sink.error(e);
            return;
        }
        if (held == null) {
            pending.sink.success();
        } else {
            pending.sink.success(held);
        }
    }

    /** Up to {@code maxKeys} reads that still have a reader, in the order they came. */
    private List<Pending> nextBatch() {
        List<Pending> batch = new ArrayList<>(Math.min(maxKeys, waitingCount.get()));
        Pending next;
        while (batch.size() < maxKeys && (next = waiting.poll()) != null) {
            waitingCount.decrementAndGet();
            if (!next.cancelled) {
                batch.add(next);
            }
        }
        return batch;
    }

    private void failWaiting(RejectedExecutionException cause) {
        Pending next;
        while ((next = waiting.poll()) != null) {
            waitingCount.decrementAndGet();
            next.sink.error(cause);
        }
    }

    private static final class Pending {
        final byte[] key;
        final MemoryBudget.Lease lease;
        final MonoSink<Record> sink;
        volatile boolean cancelled;

        Pending(byte[] key, MemoryBudget.Lease lease, MonoSink<Record> sink) {
            this.key = key;
            this.lease = lease;
            this.sink = sink;
        }

        byte[] key() {
            return key;
        }
    }
}
