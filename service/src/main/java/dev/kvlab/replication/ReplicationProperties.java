package dev.kvlab.replication;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
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
        @Min(1) @DefaultValue("256") int readRepairMaxInFlight) {

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
