package dev.kvlab.tls;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.TestCertificates;
import dev.kvlab.testing.TestCertificates.Issued;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * With kvlab.tls.replica-bundle, the replica port speaks mutual TLS: the nodes, holding certificates
 * from the cluster's CA, replicate; a caller without one, or with one from another CA, gets no
 * answer at all, signed or not.
 */
class ReplicaMutualTlsTest {

    static Issued clusterCa;
    static Issued otherCa;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws IOException {
        clusterCa = TestCertificates.ca("kvlab test cluster CA");
        otherCa = TestCertificates.ca("someone else's CA");
        Path volume = Files.createTempDirectory("kvlab-replica-tls-");
        // One certificate for every node, as the chart's wildcard for the headless Service.
        TestCertificates.writeSecretVolume(volume, TestCertificates.node(clusterCa, "kvlab node"), clusterCa);
        cluster = InProcessCluster.startWithReplicaPorts(3, replicaTls(volume, "2s"));
    }

    /** A node's settings for mutual TLS on the replica port, from a Secret-like volume. */
    static Map<String, String> replicaTls(Path volume, String replicaTimeout) {
        return Map.of(
                "kvlab.replication.timeout", replicaTimeout,
                "kvlab.tls.replica-bundle", "replica",
                "spring.ssl.bundle.pem.replica.keystore.certificate", volume.resolve("tls.crt").toString(),
                "spring.ssl.bundle.pem.replica.keystore.private-key", volume.resolve("tls.key").toString(),
                "spring.ssl.bundle.pem.replica.truststore.certificate", volume.resolve("ca.crt").toString(),
                "spring.ssl.bundle.pem.replica.reload-on-update", "true",
                "spring.ssl.bundle.watch.file.quiet-period", "100ms");
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void nodesWithCertificatesOfTheClusterCaReplicate() {
        assertThat(cluster.client(0).put("over-tls", "v".getBytes(), "3/3").statusCode()).isEqualTo(201);

        assertThat(text(cluster.client(2).get("over-tls", "3/3"))).isEqualTo("v");
        assertThat(text(cluster.client(1).get("over-tls", "3/3"))).isEqualTo("v");
    }

    @Test
    void aCallerWithACertificateOfTheClusterCaReachesTheReplicaProtocol() {
        // The contrast to the refusals below: the same call, with a certificate, gets an HTTP answer
        // (401: it is not signed).
        HttpResponse<String> answer = call(TestCertificates.sslContext(TestCertificates.node(clusterCa, "a node"), clusterCa));

        assertThat(answer.statusCode()).isEqualTo(401);
    }

    @Test
    void aCallerWithoutACertificateIsRefused() {
        assertThatThrownBy(() -> call(TestCertificates.sslContext(null, clusterCa))).isInstanceOf(UncheckedIOException.class);
    }

    @Test
    void aCallerWithACertificateOfAnotherCaIsRefused() {
        assertThatThrownBy(() -> call(TestCertificates.sslContext(TestCertificates.node(otherCa, "intruder"), clusterCa)))
                .isInstanceOf(UncheckedIOException.class);
    }

    @Test
    void aCallInClearGetsNoAnswer() {
        KvClient clear = new KvClient(cluster.replicaUrl(0).replace("https://", "http://"));

        assertThatThrownBy(() -> clear.internalRecord("over-tls")).isInstanceOf(UncheckedIOException.class);
    }

    private static HttpResponse<String> call(SSLContext tls) {
        return call(tls, cluster.replicaUrl(0));
    }

    /** A replica call from a client of its own (no connection reused), unsigned. */
    static HttpResponse<String> call(SSLContext tls, String replicaUrl) {
        try (HttpClient client = HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(5)).build()) {
            return client.send(HttpRequest.newBuilder(URI.create(replicaUrl + "/internal/v1/record?id=over-tls"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
