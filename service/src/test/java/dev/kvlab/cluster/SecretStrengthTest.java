package dev.kvlab.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.admin.ManagementProperties;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Weak secrets are refused as the node starts, with why; the secrets the project itself makes pass. */
class SecretStrengthTest {

    @Test
    void shortRepeatedAndFewSymbolSecretsAreRefused() {
        assertThat(weakness("0123456789abcde")).contains("15 bytes long").contains("at least 16");
        assertThat(weakness("aaaaaaaaaaaaaaaa")).contains("too easy to guess");
        assertThat(weakness("abababababababababababababababab")).contains("too easy to guess");
        assertThat(weakness("abcdefghabcdefghabcdefghabcdefgh")).contains("repeated in a unit of 8");
        // 16 characters of a four-symbol alphabet: 32 bits.
        assertThat(weakness("acgtcagtgcatgact")).contains("about 32 bits");
        assertThat(weakness("password-password-password")).contains("too easy to guess");
    }

    @Test
    void theSecretsTheProjectMakesAreStrongEnough() {
        SecureRandom random = new SecureRandom();
        for (int i = 0; i < 200; i++) {
            // make up, the lab and the Docker tests: 32 random bytes in hex; the tests: a UUID.
            byte[] bytes = new byte[32];
            random.nextBytes(bytes);
            assertThat(weakness(HexFormat.of().formatHex(bytes))).isNull();
            assertThat(weakness(UUID.randomUUID().toString())).isNull();
            // The chart: randAlphaNum 48.
            String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
            StringBuilder chart = new StringBuilder();
            for (int c = 0; c < 48; c++) {
                chart.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            assertThat(weakness(chart.toString())).isNull();
        }
    }

    @Test
    void theShortestRepeatingUnitIsFound() {
        assertThat(SecretStrength.period(bytes("abcabcab"))).isEqualTo(3);
        assertThat(SecretStrength.period(bytes("aaaa"))).isEqualTo(1);
        assertThat(SecretStrength.period(bytes("abcd"))).isEqualTo(4);
        assertThat(SecretStrength.period(bytes("abaab"))).isEqualTo(3);
    }

    @Test
    void aNodeRefusesAWeakClusterSecretOrAdminToken() {
        assertThatThrownBy(() -> cluster("0000000000000000").secretBytes())
                .hasMessageContaining("the cluster secret is too easy to guess");
        assertThatThrownBy(() -> new ManagementProperties("abababababababababababab", null).adminTokenBytes())
                .hasMessageContaining("the management admin token is too easy to guess");
        assertThat(cluster(UUID.randomUUID().toString()).secretBytes()).isNotNull();
        assertThat(new ManagementProperties(null, null).adminTokenBytes()).isNull();
    }

    private static ClusterProperties cluster(String secret) {
        return new ClusterProperties(ClusterProperties.Discovery.STATIC, List.<URI>of(), null,
                new ClusterProperties.Dns(null, null, "http", 0, 0, Duration.ofSeconds(5), Duration.ofSeconds(60), Duration.ofSeconds(120), null),
                secret, null, Duration.ofSeconds(60), Duration.ZERO);
    }

    private static String weakness(String secret) {
        return SecretStrength.weakness("the secret", bytes(secret));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
