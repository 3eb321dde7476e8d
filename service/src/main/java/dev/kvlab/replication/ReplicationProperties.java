package dev.kvlab.replication;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.replication.*}: how a coordinator talks to replicas.
 *
 * @param timeout              how long a coordinator waits for a replica's answer; replicas that
 *                             have not answered by then count as failed (504 if too few remain)
 * @param readRepairMaxInFlight repairs of stale replicas running at once; more are skipped
 */
@Validated
@ConfigurationProperties("kvlab.replication")
public record ReplicationProperties(
        @NotNull @DefaultValue("1s") Duration timeout,
        @Min(1) @DefaultValue("256") int readRepairMaxInFlight) {

    public ReplicationProperties {
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("kvlab.replication.timeout must be positive, was " + timeout);
        }
    }
}
