package dev.kvlab.backup;

import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.cluster.WallClock;
import dev.kvlab.heal.Handoff;
import dev.kvlab.peer.BackupClient;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.StorageProperties;
import java.time.Duration;
import java.util.Objects;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Backups of the cluster ({@code kvlab.backup.*}): this node's part of each, and the coordinator that
 * takes a whole one when the management port is asked.
 */
@Configuration(proxyBeanMethods = false)
public class BackupConfiguration {

    /** The longest a node may take to answer a hold or its release. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

    static String kvlabVersion() {
        return Objects.requireNonNullElse(BackupConfiguration.class.getPackage().getImplementationVersion(), "development");
    }

    @Bean(destroyMethod = "close")
    ConfiguredTarget backupTarget(BackupProperties properties) {
        return new ConfiguredTarget(properties);
    }

    @Bean(destroyMethod = "close")
    BackupThread backupThread() {
        return new BackupThread();
    }

    @Bean
    BackupStatus backupStatus() {
        return new BackupStatus();
    }

    @Bean
    BackupMetrics backupMetrics(BackupStatus status) {
        return new BackupMetrics(status);
    }

    @Bean
    NodeSnapshots nodeSnapshots(LocalStore store, StorageProperties storage, ConfiguredTarget target, BackupThread thread,
                                BackupStatus status, WallClock clock, BackupProperties properties) {
        NodeSnapshots snapshots = new NodeSnapshots(store, storage.dir().toAbsolutePath(), target, thread,
                new BackupPace(properties.maxBytesPerSecond().toBytes()), status, clock, kvlabVersion());
        snapshots.removeLeftoversSoon();
        return snapshots;
    }

    @Bean
    LocalBackupNode localBackupNode(Handoff handoff, NodeSnapshots snapshots, TopologyProvider topology, WallClock clock,
                                    BackupProperties properties) {
        return new LocalBackupNode(handoff, snapshots, () -> topology.current().self(), clock, properties.timeout());
    }

    @Bean
    BackupCoordinator backupCoordinator(ConfiguredTarget target, TopologyProvider topology, LocalBackupNode local, BackupClient peers,
                                        BackupThread thread, BackupStatus status, WallClock clock, BackupProperties properties) {
        return new BackupCoordinator(target, topology::current,
                node -> node.equals(topology.current().self()) ? local : peers.node(node),
                thread, status, new Retention(properties.keepLast(), properties.maxAge(), properties.timeout()), clock,
                properties.timeout(), CALL_TIMEOUT, kvlabVersion());
    }
}
