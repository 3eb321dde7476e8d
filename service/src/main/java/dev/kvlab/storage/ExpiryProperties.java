package dev.kvlab.storage;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.expiry.*}: writes with a time to live ({@code PUT ...&ttl=<seconds>}), and how a
 * node reclaims the space of expired ones ({@link ExpiryReaper}).
 *
 * @param maxTtl          the longest time to live a PUT may ask for; a longer one gets 400
 * @param reapInterval    how often the reaper looks for expired records
 * @param reapBatch       index entries one storage task reads and reaps; the task holds writes
 *                        back while it runs, so it stays small
 * @param maxReapedPerTick index entries one tick goes through at most, in batches; what expired
 *                        beyond it waits for the next tick, so a mass expiry is spread out
 */
@Validated
@ConfigurationProperties("kvlab.expiry")
public record ExpiryProperties(
        @NotNull @DefaultValue("3650d") Duration maxTtl,
        @NotNull @DefaultValue("1s") Duration reapInterval,
        @Min(1) @DefaultValue("128") int reapBatch,
        @Min(1) @DefaultValue("20000") int maxReapedPerTick) {

    public ExpiryProperties {
        if (maxTtl != null && (maxTtl.toSeconds() < 1 || maxTtl.compareTo(Duration.ofDays(36500)) > 0)) {
            throw new IllegalArgumentException("kvlab.expiry.max-ttl must be within 1s..36500d, was " + maxTtl);
        }
        if (reapInterval != null && reapInterval.toMillis() < 10) {
            throw new IllegalArgumentException("kvlab.expiry.reap-interval must be at least 10ms, was " + reapInterval);
        }
    }

    /** The defaults, for code that builds a node without Spring. */
    public static ExpiryProperties defaults() {
        return new ExpiryProperties(Duration.ofDays(3650), Duration.ofSeconds(1), 128, 20_000);
    }
}
