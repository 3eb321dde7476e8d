package dev.kvlab.admin;

import dev.kvlab.cluster.ClusterProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The credentials of the management port, read (and checked for strength) as the node starts. */
@Configuration(proxyBeanMethods = false)
public class AdminConfiguration {

    @Bean
    ManagementCredentials managementCredentials(ClusterProperties cluster, ManagementProperties management) {
        return new ManagementCredentials(cluster.secretBytes(), management.adminTokenBytes());
    }
}
