package dev.kvlab.peer;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.ReplicaException;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.IntConsumer;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Sends one peer's single-key calls in batches ({@link ReplicationProperties.Batch}): a call
 * leaves at once while fewer than {@code maxInFlight} batches are on their way, otherwise it
 * queues and leaves with the others that queued when a batch comes back. Batches grow with the
 * load without a timer adding latency, and a busy coordinator makes one request (and one storage
 * task on the peer) for many calls. The queue is bounded; a call that finds it full fails at once.
 * A call cancelled while it waits (its timeout fired) is not sent.
 */
final class PeerBatcher {

    /**
     * Sends one batch and emits the outcome of each call in call order, or fails. {@code leases}
     * holds, for each call, the lease its answer's record is held on (null for a write).
     */
    @FunctionalInterface
    interface Sender {
        Mono<List<Outcome>> send(List<StoreOp> ops, List<MemoryBudget.Lease> leases);
    }

    private final String node;
    private final Sender sender;
    private final ReplicationProperties.Batch limits;
    private final IntConsumer sentBatches;
    private final ArrayDeque<Call> queue = new ArrayDeque<>();
    private int inFlight;

    /** {@code sentBatches} hears the number of calls in every batch sent. */
    PeerBatcher(String node, Sender sender, ReplicationProperties.Batch limits, IntConsumer sentBatches) {
        this.node = node;
        this.sender = sender;
        this.limits = limits;
        this.sentBatches = sentBatches;
    }

    /**
     * The call's answer: a read's record or empty; empty for a write. A read's record is held on
     * {@code lease} (null for a write).
     */
    Mono<Optional<Record>> call(StoreOp op, MemoryBudget.Lease lease) {
        return Mono.create(sink -> {
            Call call = new Call(op, lease, sink);
            sink.onCancel(() -> call.cancelled = true);
            boolean queued;
            synchronized (this) {
                queued = queue.size() < limits.maxQueued();
                if (queued) {
                    queue.add(call);
                }
            }
            if (!queued) {
                sink.error(new RejectedExecutionException("replica " + node + ": " + limits.maxQueued() + " calls are already waiting for this peer"));
                return;
            }
            sendWhatWaits();
        });
    }

    /** Calls waiting now, for tests. */
    synchronized int queued() {
        return queue.size();
    }

    private void sendWhatWaits() {
        while (true) {
            List<Call> batch;
            synchronized (this) {
                if (inFlight >= limits.maxInFlight() || queue.isEmpty()) {
                    return;
                }
                batch = nextBatch();
                if (batch.isEmpty()) {
                    continue;
                }
                inFlight++;
            }
            send(batch);
        }
    }

    /** Takes calls from the queue up to the batch limits, leaving out cancelled ones. */
    private List<Call> nextBatch() {
        List<Call> batch = new ArrayList<>(Math.min(queue.size(), limits.maxCalls()));
        long bytes = 0;
        while (!queue.isEmpty() && batch.size() < limits.maxCalls()) {
            Call next = queue.peek();
            if (next.cancelled) {
                queue.poll();
                continue;
            }
            long size = ReplicaBatch.bytesOf(next.op);
            if (!batch.isEmpty() && bytes + size > limits.maxBytes().toBytes()) {
                break;
            }
            batch.add(queue.poll());
            bytes += size;
        }
        return batch;
    }

    private void send(List<Call> batch) {
        List<StoreOp> ops = new ArrayList<>(batch.size());
        List<MemoryBudget.Lease> leases = new ArrayList<>(batch.size());
        for (Call call : batch) {
            ops.add(call.op);
            leases.add(call.lease);
        }
        sentBatches.accept(ops.size());
        Mono<List<Outcome>> sent;
        try {
            sent = sender.send(ops, leases);
        } catch (RuntimeException e) {
            sent = Mono.error(e);
        }
        sent.switchIfEmpty(Mono.error(() -> new ReplicaException(node, "a batch completed without answers")))
                .subscribe(answers -> {
                    finished();
                    for (int i = 0; i < batch.size(); i++) {
                        batch.get(i).answer(answers.get(i));
                    }
                }, error -> {
                    finished();
                    for (Call call : batch) {
                        call.sink.error(error);
                    }
                });
    }

    /** A batch came back: the next one may leave, carrying what queued meanwhile. */
    private void finished() {
        synchronized (this) {
            inFlight--;
        }
        sendWhatWaits();
    }

    private static final class Call {
        final StoreOp op;
        final MemoryBudget.Lease lease;
        final MonoSink<Optional<Record>> sink;
        volatile boolean cancelled;

        Call(StoreOp op, MemoryBudget.Lease lease, MonoSink<Optional<Record>> sink) {
            this.op = op;
            this.lease = lease;
            this.sink = sink;
        }

        /** A read's record or empty, empty for a write; a refused call fails. */
        void answer(Outcome outcome) {
            switch (outcome) {
                case Outcome.Found found -> sink.success(Optional.of(found.record()));
                case Outcome.Failed failed -> sink.error(failed.error());
                default -> sink.success(Optional.empty());
            }
        }
    }
}
