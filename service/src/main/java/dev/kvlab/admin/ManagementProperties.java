package dev.kvlab.admin;

import dev.kvlab.cluster.SecretStrength;
import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code kvlab.management.*}: who may change state through the management port.
 *
 * @param adminToken     a token that authorizes the management port's state-changing calls
 *                       ({@code Authorization: Bearer <token>}) besides the cluster secret, so an
 *                       operator or a job need not hold the secret of the replica protocol (see
 *                       {@code adminTokenFile}, which keeps it off command lines)
 * @param adminTokenFile a file that holds the admin token (its text, surrounding white space ignored)
 */
@ConfigurationProperties("kvlab.management")
public record ManagementProperties(String adminToken, Path adminTokenFile) {

    public ManagementProperties {
        if (adminToken != null && adminTokenFile != null) {
            throw new IllegalArgumentException("set kvlab.management.admin-token or kvlab.management.admin-token-file, not both");
        }
    }

    /**
     * The admin token as bytes, read from {@code adminTokenFile} when set; null when there is none.
     * A weak one ({@link SecretStrength}) is refused, so a node does not start on it.
     */
    public byte[] adminTokenBytes() {
        return SecretStrength.read("the management admin token", adminToken, adminTokenFile, "kvlab.management.admin-token-file");
    }
}
