package dev.kvlab;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.kvlab.api.ApiProperties;
import dev.kvlab.cluster.ClusterProperties;
import dev.kvlab.cluster.DnsTopologyProvider;
import dev.kvlab.cluster.DnsjavaSrvLookup;
import dev.kvlab.cluster.ServingNodes;
import dev.kvlab.cluster.StaticTopologyProvider;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.cluster.WallClock;
import dev.kvlab.memory.HeapRegions;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.MemoryProperties;
import dev.kvlab.peer.PeerClient;
import dev.kvlab.peer.ReplicaProtocol;
import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.LocalReplica;
import dev.kvlab.replication.MissedWrites;
import dev.kvlab.replication.PreviousOwners;
import dev.kvlab.replication.ReadRepair;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.replication.ReplicationMetrics;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.storage.ExpiryProperties;
import dev.kvlab.storage.ExpiryReaper;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.StorageHealth;
import dev.kvlab.storage.StorageMetrics;
import dev.kvlab.storage.StorageProperties;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/** Wires a node: its store, its view of the cluster, and the coordinator that serves clients. */
@Configuration(proxyBeanMethods = false)
class NodeConfiguration {

    private static final Logger log = LoggerFactory.getLogger(NodeConfiguration.class);

    /** Closed after the web server has drained its requests: in-flight calls finish, then RocksDB closes. */
    @Bean(destroyMethod = "close")
    LocalStore localStore(StorageProperties properties) {
        return LocalStore.open(properties);
    }

    /** The topology as listed, without the nodes that left or are not yet seen to serve ({@link ServingNodes}). */
    @Bean(destroyMethod = "close")
    ServingNodes topologyProvider(ClusterProperties properties, ReplicationProperties replication,
                                 @Value("${server.port:8080}") int serverPort) {
        return new ServingNodes(listedTopology(properties, replication, serverPort), properties.dns().joinTimeout(), System::currentTimeMillis);
    }

    private static TopologyProvider listedTopology(ClusterProperties properties, ReplicationProperties replication, int serverPort) {
        return switch (properties.discovery()) {
            case STATIC -> new StaticTopologyProvider(properties);
            case DNS -> {
                ClusterProperties.Dns dns = properties.dns();
                DnsjavaSrvLookup lookup = new DnsjavaSrvLookup(dns.server(), Duration.ofSeconds(2));
                // Node URLs name the port where replicas are served.
                int replicaPort = replication.port() > 0 ? replication.port() : serverPort;
                yield new DnsTopologyProvider(dns, replicaPort, lookup, Clock.systemUTC()).start(dns.refreshInterval());
            }
        };
    }

    @Bean
    WallClock wallClock(ClusterProperties cluster) {
        return new WallClock(cluster.clockOffset());
    }

    @Bean
    HybridLogicalClock clock(TopologyProvider topology, WallClock wallClock, ClusterProperties cluster) {
        return new HybridLogicalClock(HybridLogicalClock.nodeIdOf(topology.current().self()), wallClock, cluster.maxClockSkew().toMillis());
    }

    /**
     * The bytes of values the node holds for requests in flight, over every path: one budget for the
     * heap. A node configured alone (no node list, no DNS) serves no peer, and keeps no share for them.
     */
    @Bean
    MemoryBudget memoryBudget(MemoryProperties memory, ApiProperties api, ClusterProperties cluster, MeterRegistry registry) {
        long regionBytes = HeapRegions.humongousRegionBytes();
        long smallest = MemoryBudget.footprint(api.largestBody(), regionBytes);
        boolean alone = cluster.discovery() == ClusterProperties.Discovery.STATIC && cluster.nodes().size() <= 1;
        MemoryBudget budget = (alone ? memory.withoutPeers() : memory).budget(Runtime.getRuntime().maxMemory(), smallest, regionBytes);
        Gauge.builder("kvlab.memory.held", budget, MemoryBudget::held)
                .description("Bytes of values the node holds for requests in flight; at kvlab.memory.max-bytes-in-flight, requests get 503")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("kvlab.memory.limit", budget, MemoryBudget::totalLimit)
                .description("kvlab.memory.max-bytes-in-flight: the most bytes of values the node holds for requests in flight")
                .baseUnit("bytes")
                .register(registry);
        return budget;
    }

    @Bean
    ReadRepair readRepair(ReplicationProperties properties, MemoryBudget budget) {
        return new ReadRepair(properties.readRepairMaxInFlight(), properties.timeout(), budget);
    }

    @Bean
    ReplicationMetrics replicationMetrics(MeterRegistry registry, ReadRepair readRepair) {
        ReplicationMetrics metrics = new ReplicationMetrics(registry);
        metrics.bind(readRepair);
        return metrics;
    }

    @Bean
    StorageMetrics storageMetrics(LocalStore store) {
        return new StorageMetrics(store);
    }

    /** Reclaims expired records' space; stops before the store closes (it depends on it). */
    @Bean(destroyMethod = "close")
    ExpiryReaper expiryReaper(LocalStore store, WallClock wallClock, ClusterProperties cluster, ExpiryProperties expiry) {
        return new ExpiryReaper(store, wallClock, cluster.maxClockSkew(), expiry);
    }

    @Bean
    MeterBinder expiryMetrics(ExpiryReaper reaper) {
        return registry -> FunctionCounter.builder("kvlab.storage.expired.reaped", reaper, ExpiryReaper::reaped)
                .description("Expired records the reaper turned into tombstones of their version, for compaction to drop their values")
                .register(registry);
    }

    /**
     * The health indicator "storage", part of readiness: down, with why and since when, while the
     * store refuses writes (a full disk). Kubernetes then takes the node out of the client Service
     * until RocksDB has resumed; its replicas still serve reads to the other coordinators.
     */
    @Bean
    HealthIndicator storage(LocalStore store) {
        return () -> {
            StorageHealth.State state = store.health();
            if (state.writable()) {
                return Health.up().withDetail("writes", "stored").build();
            }
            return Health.down()
                    .withDetail("writes", state.diskFull() ? "refused: the disk is full; they answer 507 until space returns" : "refused")
                    .withDetail("reads", "served")
                    .withDetail("problem", state.problem())
                    .withDetail("since", state.since().toString())
                    .build();
        };
    }

    @Bean
    MeterBinder topologyMetrics(TopologyProvider topology) {
        return registry -> Gauge.builder("kvlab.cluster.nodes", topology, t -> t.current().size())
                .description("Nodes in this node's view of the cluster")
                .register(registry);
    }

    @Bean
    ApplicationListener<ApplicationReadyEvent> warmUpPeers(Coordinator coordinator) {
        return ready -> coordinator.warmUpPeers();
    }

    /**
     * A node that runs out of heap should exit whole (and be restarted) rather than live on with
     * threads that died: every launcher of kvlab's sets -XX:+ExitOnOutOfMemoryError. Says so when a
     * hand-made command line does not.
     */
    @Bean
    ApplicationListener<ApplicationReadyEvent> warnWithoutExitOnOutOfMemory() {
        return ready -> {
            HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (vm != null && !"true".equals(vm.getVMOption("ExitOnOutOfMemoryError").getValue())
                    && !"true".equals(vm.getVMOption("CrashOnOutOfMemoryError").getValue())) {
                log.warn("this JVM runs without -XX:+ExitOnOutOfMemoryError: should it run out of heap, the node would live on "
                        + "half-broken instead of exiting to be restarted; add the flag to its command line");
            }
        };
    }

    /**
     * The event loops of the web server, the replica server and the replica client: Reactor
     * Netty's shared ones, or {@code kvlab.netty.event-loops} of the node's own. Either way they
     * are disposed when the web server has stopped.
     */
    @Bean
    ReactorResourceFactory reactorResourceFactory(NettyProperties netty) {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        if (netty.eventLoops() > 0) {
            factory.setUseGlobalResources(false);
            factory.setLoopResourcesSupplier(() -> LoopResources.create("reactor-http", netty.eventLoops(), true));
        }
        return factory;
    }

    /**
     * Slow and idle clients of the client port hold neither its connections nor the memory budget
     * for long: at most {@code kvlab.netty.max-connections.client} connections, and bodies timed
     * ({@code kvlab.netty.body-timeout}, {@code body-min-rate}). The replica protocol's streams of
     * batches are long-lived bodies by design when they share this port.
     */
    @Bean
    NettyServerCustomizer clientPortGuards(NettyProperties netty, ReplicationProperties replication) {
        return netty.clientPort(replication.port() > 0 ? List.of() : List.of(ReplicaProtocol.STREAM_PATH))::applyTo;
    }

    /** This node's replica and one client of each peer's, shared by the coordinator and the background work. */
    @Bean
    ReplicaDirectory replicaDirectory(TopologyProvider topology, LocalStore store, PeerClient peers) {
        return new ReplicaDirectory(new LocalReplica(topology.current().self(), store), peers::replicaOf);
    }

    @Bean
    Coordinator coordinator(TopologyProvider topology, ReplicaDirectory replicas, HybridLogicalClock clock, ReadRepair readRepair,
                            ReplicationMetrics metrics, MissedWrites hints, PreviousOwners previousOwners) {
        return new Coordinator(topology, replicas, clock, readRepair, metrics, hints, previousOwners);
    }
}
