package dev.kvlab.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.testing.TestCertificates;
import dev.kvlab.testing.TestCertificates.Issued;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.ssl.DefaultSslBundleRegistry;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** The peers' client end checks the server's name, and a bundle without the cluster's CA is refused. */
class ReplicaTlsTest {

    static final Issued CA = TestCertificates.ca("kvlab test CA");

    @Test
    void aServerWhoseCertificateDoesNotNameTheHostCalledIsRefused() {
        ReplicaTls client = tls(TestCertificates.node(CA, "the calling node"));
        ReplicaTls elsewhere = tls(TestCertificates.node(CA, "another host", "elsewhere.example"));
        ReplicaTls right = tls(TestCertificates.node(CA, "the called node"));

        assertThat(get(client, right)).isEqualTo("ok");
        assertThatThrownBy(() -> get(client, elsewhere)).hasStackTraceContaining("No subject alternative names matching");
    }

    @Test
    void aBundleWithoutTrustedCasIsRefused() {
        Issued node = TestCertificates.node(CA, "node");
        DefaultSslBundleRegistry bundles = new DefaultSslBundleRegistry("replica", SslBundle.of(new PemSslStoreBundle(
                PemSslStoreDetails.forCertificate(node.certificatePem()).withPrivateKey(node.privateKeyPem()), null)));

        assertThatThrownBy(() -> ReplicaTls.of(bundles, "replica")).hasMessageContaining("has no truststore");
    }

    private static ReplicaTls tls(Issued node) {
        return ReplicaTls.of(new DefaultSslBundleRegistry("replica", SslBundle.of(new PemSslStoreBundle(
                PemSslStoreDetails.forCertificate(node.certificatePem()).withPrivateKey(node.privateKeyPem()),
                PemSslStoreDetails.forCertificate(CA.certificatePem())))), "replica");
    }

    private static String get(ReplicaTls client, ReplicaTls server) {
        DisposableServer running = HttpServer.create().host("127.0.0.1").port(0).secure(spec -> spec.sslContext(server.serverContext()))
                .handle((request, response) -> response.sendString(reactor.core.publisher.Mono.just("ok"))).bindNow();
        try {
            return HttpClient.create().secure(spec -> spec.sslContext(client.clientContext()))
                    .get().uri("https://127.0.0.1:" + running.port() + "/").responseContent().aggregate().asString()
                    .block(Duration.ofSeconds(10));
        } finally {
            running.disposeNow();
        }
    }
}
