package dev.kvlab.replication;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.replication.*}: how a coordinator talks to replicas.
 *
 * @param port                  a port of its own for the replica protocol between nodes (node URLs
 *                              then name this port); 0 serves it on the client port
 * @param timeout               how long a coordinator waits for a replica's answer; replicas that
 *                              have not answered by then count as failed (504 when too few remain).
 *                              Also how long a range waits for a peer's first entry
 * @param connectTimeout        how long opening a connection to a peer may take
 * @param maxConnections        pooled connections to each peer
 * @param pendingAcquireMax     requests waiting for a pooled connection to a peer; beyond it a
 *                              replica call fails at once instead of queueing
 * @param rangeIdleTimeout      a peer's range stream that delivers nothing for this long fails the
 *                              client's range (a reader that stops reading for this long too)
 * @param readRepairMaxInFlight repairs of stale replicas running at once; more are skipped
 * @param maxRangeStreams       records streams ({@code /internal/v1/records}, a part of some
 *                              coordinator's range) a node serves at once; more get 503
 * @param batch                 how single-key calls to a peer travel together ({@link Batch})
 */
@Validated
@ConfigurationProperties("kvlab.replication")
public record ReplicationProperties(
        @Min(0) @Max(65535) @DefaultValue("0") int port,
        @NotNull @DefaultValue("1s") Duration timeout,
        @NotNull @DefaultValue("500ms") Duration connectTimeout,
        @Min(1) @DefaultValue("64") int maxConnections,
        @Min(1) @DefaultValue("1024") int pendingAcquireMax,
        @NotNull @DefaultValue("60s") Duration rangeIdleTimeout,
        @Min(1) @DefaultValue("256") int readRepairMaxInFlight,
        @Min(1) @DefaultValue("16") int maxRangeStreams,
        @NotNull @Valid @DefaultValue Batch batch) {

    /**
     * {@code kvlab.replication.batch.*}: a coordinator sends its reads and writes for one peer in
     * batches, on one stream to the peer or each in a request of its own ({@code stream}). A call leaves at once while fewer than
     * {@code maxInFlight} batches to that peer are on their way; otherwise it waits, and the calls
     * that waited leave together as soon as one comes back. No timer: an idle node's call travels
     * alone, a busy node's calls share a request.
     *
     * @param maxInFlight batches on their way to one peer at once
     * @param maxCalls    calls in one batch
     * @param maxBytes    bytes of calls in one batch (a single larger call travels alone); a replica
     *                    accepts batch bodies up to this plus {@code kvlab.api.max-value-size}
     * @param maxQueued   calls waiting for a batch to one peer; beyond it a call fails at once
     * @param stream      send the batches to a peer on one long-lived request whose body and answer
     *                    are streams of frames ({@code POST /internal/v1/stream}); false sends each
     *                    batch in a request of its own ({@code POST /internal/v1/batch})
     * @param largeRecord calls whose record is at least this large (a write's; a read's as its key's
     *                    record was last seen) go to each peer in batches of their own, on a stream of
     *                    their own, with limits of their own: a peer answers a stream's frames in
     *                    order, so a small call queued behind a megabyte waited for the megabyte. 0:
     *                    every call shares one lane
     */
    public record Batch(
            @Min(1) @DefaultValue("1") int maxInFlight,
            @Min(1) @Max(4096) @DefaultValue("64") int maxCalls,
            @NotNull @DefaultValue("256KB") DataSize maxBytes,
            @Min(1) @DefaultValue("1024") int maxQueued,
            @DefaultValue("true") boolean stream,
            @NotNull @DefaultValue("64KB") DataSize largeRecord) {

        /** Whether a call whose record takes {@code bytes} travels in the large records' lane. */
        public boolean isLarge(long bytes) {
            long threshold = largeRecord.toBytes();
            return threshold > 0 && bytes >= threshold;
        }
    }

    public ReplicationProperties {
        requirePositive("kvlab.replication.timeout", timeout);
        requirePositive("kvlab.replication.connect-timeout", connectTimeout);
        requirePositive("kvlab.replication.range-idle-timeout", rangeIdleTimeout);
    }

    private static void requirePositive(String name, Duration value) {
        if (value != null && (value.isNegative() || value.isZero())) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }
}
