package dev.kvlab.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Single writes from many callers, written together: a write that arrives while a group is being
 * written waits and leaves with the next group, in one storage task and one RocksDB write (one WAL
 * append, one fsync when writes are synced). Idle, a write leaves at once, alone; under load groups
 * grow without a timer adding latency. At most {@code maxWaiting} writes wait; beyond that a write
 * is rejected at once, as a full storage queue rejects any other call.
 */
final class GroupCommit {

    /** Bytes of records in one group, so one RocksDB write batch stays small; a larger record goes alone. */
    static final long MAX_GROUP_BYTES = 4L * 1024 * 1024;

    private final RocksStore store;
    private final StorageExecutor executor;
    private final int maxWaiting;
    private final Queue<Pending> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger waitingCount = new AtomicInteger();
    /** A task that writes the next group is queued or running; at most one is. */
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicLong groupsWritten = new AtomicLong();
    private final AtomicLong writesWritten = new AtomicLong();

    GroupCommit(RocksStore store, StorageExecutor executor, int maxWaiting) {
        this.store = store;
        this.executor = executor;
        this.maxWaiting = maxWaiting;
    }

    /** Completes, on a storage thread, once the record is in the WAL with its group. */
    Mono<Void> write(byte[] key, Record record) {
        return Mono.create(sink -> {
            if (waitingCount.incrementAndGet() > maxWaiting) {
                waitingCount.decrementAndGet();
                sink.error(new RejectedExecutionException(maxWaiting + " writes are already waiting for the store"));
                return;
            }
            waiting.add(new Pending(new StoreOp.Write(key, record), sink));
            schedule();
        });
    }

    /** Writes waiting for a group now, for metrics. */
    int waiting() {
        return waitingCount.get();
    }

    /** Groups written so far, for metrics: with {@link #writesWritten()}, how many writes a group carries. */
    long groupsWritten() {
        return groupsWritten.get();
    }

    /** Writes stored so far in groups, for metrics. */
    long writesWritten() {
        return writesWritten.get();
    }

    /**
     * Queues a task to write the next group, unless one is queued or running. Only the holder of
     * {@code scheduled} takes writes out of the queue, so a group and a failure never race for one.
     */
    private void schedule() {
        while (!waiting.isEmpty() && scheduled.compareAndSet(false, true)) {
            try {
                executor.execute(this::writeNextGroup);
                return;
            } catch (RejectedExecutionException e) {
                // The executor is full or closed: nothing would write what waits, so fail it.
                failWaiting(e);
                scheduled.set(false);
            }
        }
    }

    private void writeNextGroup() {
        List<Pending> group = nextGroup();
        RuntimeException failure = null;
        try {
            store.writeAll(group.stream().map(Pending::write).toList());
            groupsWritten.incrementAndGet();
            writesWritten.addAndGet(group.size());
        } catch (RuntimeException e) {
            failure = e;
        }
        // Writes that came meanwhile leave in a task of their own, before this group's callers
        // go on with their work on this thread.
        scheduled.set(false);
        schedule();
        for (Pending pending : group) {
            if (failure == null) {
                pending.sink.success();
            } else {
                pending.sink.error(failure);
            }
        }
    }

    private List<Pending> nextGroup() {
        List<Pending> group = new ArrayList<>();
        long bytes = 0;
        Pending next;
        while ((next = waiting.peek()) != null) {
            long size = next.write.key().length + (long) next.write.record().encoded().length;
            if (!group.isEmpty() && bytes + size > MAX_GROUP_BYTES) {
                break;
            }
            waiting.poll();
            waitingCount.decrementAndGet();
            group.add(next);
            bytes += size;
        }
        return group;
    }

    private void failWaiting(RejectedExecutionException cause) {
        Pending next;
        while ((next = waiting.poll()) != null) {
            waitingCount.decrementAndGet();
            next.sink.error(cause);
        }
    }

    private record Pending(StoreOp.Write write, MonoSink<Void> sink) {
    }
}
