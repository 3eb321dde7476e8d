package dev.kvlab.tls;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code kvlab.tls.*}: TLS between the nodes.
 *
 * @param replicaBundle the Spring Boot SSL bundle ({@code spring.ssl.bundle.pem.<name>}) that secures
 *                      the replica port and the calls to the peers with mutual TLS: the node's
 *                      certificate and key (keystore) and the cluster's CA (truststore). Empty: the
 *                      replica protocol runs in clear, protected by its signatures only.
 */
@ConfigurationProperties("kvlab.tls")
public record TlsProperties(@DefaultValue("") String replicaBundle) {
}
