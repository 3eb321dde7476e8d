package dev.kvlab.replication;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.TimeoutException;

/**
 * What replication does beside answering: replica calls that failed or timed out, requests that
 * ended in 504 for want of a quorum, the size of batches sent to peers, and read repairs.
 */
public final class ReplicationMetrics {

    private final Counter replicaTimeouts;
    private final Counter replicaErrors;
    private final DistributionSummary batchCalls;
    private final Counter previousOwnerReads;
    private final Counter readsRefused;
    private final MeterRegistry registry;

    public ReplicationMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.replicaTimeouts = Counter.builder("kvlab.replica.failures")
                .description("Replica calls that failed, by reason").tag("reason", "timeout").register(registry);
        this.replicaErrors = Counter.builder("kvlab.replica.failures")
                .description("Replica calls that failed, by reason").tag("reason", "error").register(registry);
        this.batchCalls = DistributionSummary.builder("kvlab.replica.batch.calls")
                .description("Calls per batch sent to a peer: 1 when idle, more under load").register(registry);
        this.previousOwnerReads = Counter.builder("kvlab.handoff.previous.owner.reads")
                .description("Reads answered from a key's owners before the last topology change, while its records move").register(registry);
        this.readsRefused = Counter.builder("kvlab.reads.refused")
                .description("Reads refused (503) before their peers were asked: no room on the coordinator for the replicas' answers").register(registry);
    }

    void readRefused() {
        readsRefused.increment();
    }

    void readFromPreviousOwners() {
        previousOwnerReads.increment();
    }

    public void batchSent(int calls) {
        batchCalls.record(calls);
    }

    public void replicaFailed(Throwable error) {
        (error instanceof TimeoutException ? replicaTimeouts : replicaErrors).increment();
    }

    void quorumFailed(String operation) {
        Counter.builder("kvlab.quorum.failures")
                .description("Requests answered 504: fewer than ack replicas answered in time")
                .tag("operation", operation)
                .register(registry)
                .increment();
    }

    /** Publishes the read repair's counts. */
    public void bind(ReadRepair readRepair) {
        FunctionCounter.builder("kvlab.read.repairs", readRepair, ReadRepair::repaired)
                .description("Stale replicas brought up to date after a read, by result").tag("result", "repaired").register(registry);
        FunctionCounter.builder("kvlab.read.repairs", readRepair, ReadRepair::skipped)
                .description("Stale replicas brought up to date after a read, by result").tag("result", "skipped").register(registry);
        FunctionCounter.builder("kvlab.read.repairs", readRepair, ReadRepair::failed)
                .description("Stale replicas brought up to date after a read, by result").tag("result", "failed").register(registry);
    }
}
