package dev.kvlab.peer;

import dev.kvlab.NettyProperties;
import dev.kvlab.api.ApiProperties;
import dev.kvlab.backup.BackupProperties;
import dev.kvlab.backup.LocalBackupNode;
import dev.kvlab.cluster.ClusterProperties;
import dev.kvlab.cluster.ServingNodes;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.cluster.WallClock;
import dev.kvlab.http.ChunkedStream;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.http.StreamAdmission;
import dev.kvlab.lifecycle.LifecycleStep;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.Replica;
import dev.kvlab.replication.ReplicationMetrics;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.replication.TimeoutTimer;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.tls.ReplicaTls;
import io.netty.channel.ChannelOption;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.boot.reactor.netty.autoconfigure.NettyServerProperties;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The replica protocol's two ends: the server end ({@link ReplicaHandler}) on the client port or,
 * with {@code kvlab.replication.port}, on a port of its own ({@link ReplicaServer}); and the client
 * end ({@link PeerClient}), one pooled {@link WebClient} on the server's event loops.
 */
@Configuration(proxyBeanMethods = false)
public class PeerConfiguration {

    /**
     * The cluster's secret signs and checks every replica call. A node of a cluster must have one:
     * without it anyone who reaches a port could write any version of any key.
     */
    @Bean
    PeerAuthentication peerAuthentication(ClusterProperties cluster, TopologyProvider topology, WallClock wallClock) {
        byte[] secret = cluster.secretBytes();
        if (secret == null && (topology.current().size() > 1 || cluster.discovery() == ClusterProperties.Discovery.DNS)) {
            throw new IllegalStateException("a node of a cluster needs the cluster's secret: set kvlab.cluster.secret-file "
                    + "(or kvlab.cluster.secret) to the same secret on every node");
        }
        return new PeerAuthentication(secret, wallClock, cluster.maxClockSkew().toMillis(), () -> topology.current().self());
    }

    @Bean
    ReplicaHandler replicaHandler(LocalStore store, HybridLogicalClock clock, PeerAuthentication authentication, ApiProperties api,
                                  MemoryBudget budget, ReplicationProperties replication, RepairResponder repair, Leaving leaving) {
        // Peers' requests take the budget's share for replica work: coordinators holding room for
        // their answers cannot leave the replica reads those answers need without any.
        MemoryBudget replicaWork = budget.forReplicaWork();
        StreamAdmission rangeStreams = new StreamAdmission(replication.maxRangeStreams(), ChunkedStream.reservation(api.largestEntry()),
                replicaWork, "records streams (kvlab.replication.max-range-streams)");
        return new ReplicaHandler(store, clock, authentication, api.maxValueSize(), replicaWork, rangeStreams, repair, replication.batch(),
                leaving);
    }

    /**
     * Ends the coordinators' batch streams into this node as it starts to stop, before the servers
     * drain their requests: a stream is a request that would otherwise hold the graceful shutdown
     * until its timeout.
     */
    @Bean
    LifecycleStep replicaStreamsLifecycle(ReplicaHandler replica) {
        return LifecycleStep.onStop(LifecycleStep.REPLICA_STREAMS, replica::endStreams);
    }

    /** A backup's calls to this node, beside the replica calls and under the same guard. */
    @Bean
    BackupHandler backupHandler(PeerAuthentication authentication, MemoryBudget budget, LocalBackupNode local) {
        return new BackupHandler(authentication, budget, local);
    }

    /** Peers' notices that a node has left or serves, beside the replica calls and under the same guard. */
    @Bean
    MembershipHandler membershipHandler(PeerAuthentication authentication, MemoryBudget budget, ServingNodes serving) {
        return new MembershipHandler(authentication, budget, serving);
    }

    /** The replica protocol on the client port, when it has no port of its own. */
    @Bean
    @ConditionalOnExpression("${kvlab.replication.port:0} == 0")
    NettyRouteProvider replicaRoutes(ReplicaHandler replica, BackupHandler backup, MembershipHandler membership) {
        return routes -> membership.addTo(backup.addTo(replica.addTo(routes)));
    }

    @Bean
    @ConditionalOnExpression("${kvlab.replication.port:0} > 0")
    ReplicaServer replicaServer(ReplicaHandler replica, BackupHandler backup, MembershipHandler membership, ReplicationProperties replication, ReactorResourceFactory resources,
                                @Value("${spring.lifecycle.timeout-per-shutdown-phase:20s}") Duration drainTimeout,
                                @Value("${server.netty.idle-timeout:#{null}}") Duration idleTimeout, NettyProperties netty,
                                NettyServerProperties serverNetty, ServerProperties server, ObjectProvider<ReplicaTls> tls) {
        ReplicaTls replicaTls = tls.getIfAvailable();
        // The client port's limits (server.netty.max-initial-line-length, server.max-http-request-header-size), so
        // a request the client port takes, such as a range with long bounds, can be passed on to a replica.
        return new ReplicaServer(replication.port(), routes -> membership.addTo(backup.addTo(replica.addTo(routes))), resources.getLoopResources(), drainTimeout, idleTimeout,
                (int) serverNetty.getMaxInitialLineLength().toBytes(), (int) server.getMaxHttpRequestHeaderSize().toBytes(),
                netty.replicaPort(List.of(ReplicaProtocol.STREAM_PATH)), replicaTls == null ? null : replicaTls.serverContext());
    }

    /** Replica call timeouts; a tick of 20 ms is 2 % of the default 1 s timeout. */
    @Bean(destroyMethod = "close")
    TimeoutTimer replicaTimeouts() {
        return new TimeoutTimer(Duration.ofMillis(20));
    }

    /** Longest a pooled peer connection is kept idle when the servers close idle ones later or never. */
    static final Duration PEER_CONNECTION_MAX_IDLE = Duration.ofSeconds(30);

    /** One pool of connections to the peers for every replica call; disposed at shutdown. */
    @Bean(destroyMethod = "dispose")
    ConnectionProvider replicaConnections(ReplicationProperties properties,
                                          @Value("${server.netty.idle-timeout:#{null}}") Duration serverIdleTimeout) {
        Duration maxIdle = peerConnectionMaxIdle(serverIdleTimeout);
        return ConnectionProvider.builder("kvlab-replicas")
                .maxConnections(properties.maxConnections())
                .pendingAcquireMaxCount(properties.pendingAcquireMax())
                .pendingAcquireTimeout(properties.timeout())
                .maxIdleTime(maxIdle)
                .evictInBackground(maxIdle)
                .build();
    }

    /**
     * How long a peer connection may sit idle in the pool: half the peers' own idle timeout (the
     * cluster's nodes share their configuration), so that the pool lets a connection go before the
     * peer closes it. Kept longer, a replica call could take a connection the peer is closing at
     * that moment and fail with "closed before response".
     */
    static Duration peerConnectionMaxIdle(Duration serverIdleTimeout) {
        if (serverIdleTimeout == null || serverIdleTimeout.isZero() || serverIdleTimeout.isNegative()) {
            return PEER_CONNECTION_MAX_IDLE;
        }
        Duration half = serverIdleTimeout.dividedBy(2);
        return half.compareTo(PEER_CONNECTION_MAX_IDLE) < 0 ? half : PEER_CONNECTION_MAX_IDLE;
    }

    /**
     * Runs on the server's event loops (the ReactorResourceFactory's): no second set of threads.
     * Its users sign every call, body included, with the cluster's secret ({@link PeerAuthentication});
     * with {@code kvlab.tls.replica-bundle}, it calls the peers over mutual TLS as well.
     */
    @Bean
    WebClient replicaClient(ConnectionProvider connections, ReactorResourceFactory resources, ReplicationProperties properties,
                            ObjectProvider<ReplicaTls> tls) {
        CancelledCallBodies.install();
        HttpClient http = HttpClient.create(connections)
                .runOn(resources.getLoopResources())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) properties.connectTimeout().toMillis())
                // Peers are found by name: a pod that comes back with a new address is found
                // again within seconds (CoreDNS answers with a 5 s TTL).
                .resolver(spec -> spec.cacheMaxTimeToLive(Duration.ofSeconds(5)));
        ReplicaTls replicaTls = tls.getIfAvailable();
        if (replicaTls != null) {
            http = http.secure(spec -> spec.sslContext(replicaTls.clientContext()));
        }
        return WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(http))
                .build();
    }

    /**
     * The initiator's end of repair rounds. A peer scans its store, paced, before it answers: ten
     * minutes covers a scan of about a hundred million keys at the default rate.
     */
    @Bean
    RepairClient repairClient(WebClient replicaClient, PeerAuthentication authentication) {
        return new RepairClient(replicaClient, authentication, Duration.ofMinutes(10), RequestParameters.MAX_KEY_BYTES);
    }

    /** A backup coordinator's calls to the peers: a part may take up to {@code kvlab.backup.timeout}. */
    @Bean
    BackupClient backupClient(WebClient replicaClient, PeerAuthentication authentication, BackupProperties backup) {
        return new BackupClient(replicaClient, authentication, Duration.ofSeconds(10), backup.timeout());
    }

    /** Membership notices, each bounded by the replica call timeout. */
    @Bean
    MembershipClient membershipClient(WebClient replicaClient, PeerAuthentication authentication, ReplicationProperties replication) {
        return new MembershipClient(replicaClient, authentication, replication.timeout());
    }

    @Bean
    PeerClient peerClient(WebClient replicaClient, PeerAuthentication authentication, TimeoutTimer replicaTimeouts,
                          ReplicationProperties replication, ApiProperties api, ReplicationMetrics metrics) {
        return node -> new RemoteReplica(node, replicaClient, authentication, replicaTimeouts, replication.timeout(), replication.rangeIdleTimeout(),
                RequestParameters.MAX_KEY_BYTES, api.maxValueSize().toBytes(), replication.batch(), metrics);
    }
}
