package dev.kvlab.tls;

import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.replication.ReplicationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/** Mutual TLS on the replica protocol when {@code kvlab.tls.replica-bundle} names an SSL bundle. */
@Configuration(proxyBeanMethods = false)
public class TlsConfiguration {

    @Bean
    @Conditional(OnReplicaBundle.class)
    ReplicaTls replicaTls(SslBundles bundles, TlsProperties tls, ReplicationProperties replication, TopologyProvider topology) {
        if (replication.port() <= 0) {
            throw new IllegalStateException("kvlab.tls.replica-bundle secures the replica port: set kvlab.replication.port too "
                    + "(for HTTPS on the client port, use server.ssl.bundle)");
        }
        for (String node : topology.current().nodes()) {
            if (!node.startsWith("https://")) {
                throw new IllegalStateException("with kvlab.tls.replica-bundle the nodes are called over TLS: their URLs must be https:// "
                        + "(kvlab.cluster.nodes, or kvlab.cluster.dns.scheme=https), was " + node);
            }
        }
        return ReplicaTls.of(bundles, tls.replicaBundle());
    }
}
