package dev.kvlab.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.TestCertificates;
import dev.kvlab.testing.TestCertificates.Issued;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A certificate replaced on disk, as Kubernetes updates a mounted Secret, serves the replica port's
 * next handshakes without a restart; so does a new CA, which then is the only one trusted.
 */
class ReplicaCertificateRotationTest {

    InProcessCluster node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void aNewCertificateAndThenANewCaArePickedUpWithoutARestart() throws Exception {
        Issued firstCa = TestCertificates.ca("first CA");
        Issued a = TestCertificates.node(firstCa, "node cert A");
        Path volume = Files.createTempDirectory("kvlab-rotation-");
        TestCertificates.writeSecretVolume(volume, a, firstCa);
        node = InProcessCluster.startWithReplicaPorts(1, ReplicaMutualTlsTest.replicaTls(volume, "1s"));
        Issued firstCaClient = TestCertificates.node(firstCa, "client of the first CA");
        assertThat(presented(firstCaClient, firstCa)).isEqualTo(a.serial());

        Issued b = TestCertificates.node(firstCa, "node cert B");
        TestCertificates.writeSecretVolume(volume, b, firstCa);

        awaitPresented(b, firstCaClient, firstCa);
        assertThat(ReplicaMutualTlsTest.call(TestCertificates.sslContext(firstCaClient, firstCa), node.replicaUrl(0)).statusCode())
                .isEqualTo(401);

        Issued secondCa = TestCertificates.ca("second CA");
        Issued c = TestCertificates.node(secondCa, "node cert C");
        TestCertificates.writeSecretVolume(volume, c, secondCa);
        Issued secondCaClient = TestCertificates.node(secondCa, "client of the second CA");

        awaitPresented(c, secondCaClient, secondCa);
        assertThat(ReplicaMutualTlsTest.call(TestCertificates.sslContext(secondCaClient, secondCa), node.replicaUrl(0)).statusCode())
                .isEqualTo(401);
        assertThatThrownBy(() -> ReplicaMutualTlsTest.call(TestCertificates.sslContext(firstCaClient, firstCa, secondCa),
                node.replicaUrl(0))).isInstanceOf(UncheckedIOException.class);
    }

    private void awaitPresented(Issued expected, Issued client, Issued ca) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(15));
        BigInteger seen = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                seen = presented(client, ca);
                if (expected.serial().equals(seen)) {
                    return;
                }
            } catch (IOException notYet) {
                // The server still presents a certificate this client does not trust.
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the replica port still presents certificate " + seen + ", not " + expected.serial());
    }

    /** The serial number of the certificate a new handshake with the replica port is answered with. */
    private BigInteger presented(Issued client, Issued trusted) throws IOException {
        SSLContext tls = TestCertificates.sslContext(client, trusted);
        URI replica = URI.create(node.replicaUrl(0));
        try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket(replica.getHost(), replica.getPort())) {
            socket.setSoTimeout(5000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }
}
