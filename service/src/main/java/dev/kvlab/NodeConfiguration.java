package dev.kvlab;

import dev.kvlab.cluster.ClusterProperties;
import dev.kvlab.cluster.StaticTopologyProvider;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.LocalReplica;
import dev.kvlab.replication.ReadRepair;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.StorageProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Wires a node: its store, its view of the cluster, and the coordinator that serves clients. */
@Configuration(proxyBeanMethods = false)
class NodeConfiguration {

    /** Closed after the web server has drained its requests: in-flight calls finish, then RocksDB closes. */
    @Bean(destroyMethod = "close")
    LocalStore localStore(StorageProperties properties) {
        return LocalStore.open(properties);
    }

    @Bean
    TopologyProvider topologyProvider(ClusterProperties properties) {
        return new StaticTopologyProvider(properties);
    }

    @Bean
    HybridLogicalClock clock(TopologyProvider topology) {
        return new HybridLogicalClock(HybridLogicalClock.nodeIdOf(topology.current().self()));
    }

    @Bean
    ReadRepair readRepair(ReplicationProperties properties) {
        return new ReadRepair(properties.readRepairMaxInFlight(), properties.timeout());
    }

    @Bean
    Coordinator coordinator(TopologyProvider topology, LocalStore store, HybridLogicalClock clock,
                            ReadRepair readRepair, ReplicationProperties properties) {
        LocalReplica local = new LocalReplica(topology.current().self(), store);
        ReplicaDirectory replicas = new ReplicaDirectory(local, node -> {
            throw new IllegalStateException("no remote replicas in a single-node build: " + node);
        });
        return new Coordinator(topology, replicas, clock, readRepair, properties.timeout());
    }
}
