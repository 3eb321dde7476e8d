package dev.kvlab.backup;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * This node's backups as Prometheus metrics: when its last part was stored whole (for an alert on a
 * backup's age), how long it took and how big it was, the bytes it sent, and the failures.
 */
public final class BackupMetrics implements MeterBinder {

    private final BackupStatus status;

    public BackupMetrics(BackupStatus status) {
        this.status = status;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("kvlab.backup.last.success.timestamp", status, s -> s.lastSuccess() == null ? 0 : s.lastSuccess().finishedMillis() / 1000.0)
                .baseUnit("seconds")
                .description("When this node's last part of a backup was stored whole, in seconds since the epoch; 0 before any")
                .register(registry);
        Gauge.builder("kvlab.backup.duration", status, s -> s.lastSuccess() == null ? 0 : s.lastSuccess().durationMillis() / 1000.0)
                .baseUnit("seconds")
                .description("How long this node's last part of a backup took, from its checkpoint to its manifest stored")
                .register(registry);
        Gauge.builder("kvlab.backup.snapshot", status, s -> s.lastSuccess() == null ? 0 : s.lastSuccess().bytes())
                .baseUnit("bytes")
                .description("The size of this node's last part of a backup: every file of its checkpoint")
                .register(registry);
        FunctionCounter.builder("kvlab.backup.uploaded", status, BackupStatus::uploadedBytes)
                .baseUnit("bytes")
                .description("Bytes of files this node sent to the backup target (files stored already are not sent again)")
                .register(registry);
        FunctionCounter.builder("kvlab.backup.failures", status, BackupStatus::failures)
                .description("Backups that failed: this node's parts, and backups this node coordinated")
                .register(registry);
    }
}
