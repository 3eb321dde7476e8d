package dev.kvlab.tls;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.util.Arrays;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * Mutual TLS on the replica protocol, from a Spring Boot SSL bundle: the node presents its own
 * certificate on both ends (server and client) and accepts only a peer whose certificate chains to
 * the bundle's trusted CAs; a client also checks that the server's certificate names the host it
 * called (the pod's DNS name). When the bundle's files change ({@code reload-on-update}), the new
 * certificate, key and CAs serve every handshake from then on; connections already open keep theirs.
 */
public final class ReplicaTls {

    private static final Logger log = LoggerFactory.getLogger(ReplicaTls.class);

    private final String bundleName;
    private final ReloadingKeyManager keys;
    private final ReloadingTrustManager trust;
    private final SslContext server;
    private final SslContext client;

    private ReplicaTls(String bundleName, SslBundle bundle) {
        this.bundleName = bundleName;
        this.keys = new ReloadingKeyManager(keyManager(bundleName, bundle));
        this.trust = new ReloadingTrustManager(trustManager(bundleName, bundle));
        try {
            // The JDK's TLS asks the key and trust managers on every handshake (OpenSSL would
            // copy the key once), which is what lets a rotated certificate take effect.
            this.server = SslContextBuilder.forServer(keys).trustManager(trust).clientAuth(ClientAuth.REQUIRE)
                    .sslProvider(SslProvider.JDK).build();
            this.client = SslContextBuilder.forClient().keyManager(keys).trustManager(trust)
                    .endpointIdentificationAlgorithm("HTTPS").sslProvider(SslProvider.JDK).build();
        } catch (SSLException e) {
            throw new IllegalStateException("SSL bundle '" + bundleName + "' cannot secure the replica protocol: " + e.getMessage(), e);
        }
    }

    /** The bundle {@code name} of {@code bundles}, followed when its files change. */
    public static ReplicaTls of(SslBundles bundles, String name) {
        ReplicaTls tls = new ReplicaTls(name, bundles.getBundle(name));
        bundles.addBundleUpdateHandler(name, tls::update);
        return tls;
    }

    /** The replica port's end: requires a client certificate from the cluster's CA. */
    public SslContext serverContext() {
        return server;
    }

    /** The peers' client end: presents the node's certificate and checks the server's name. */
    public SslContext clientContext() {
        return client;
    }

    void update(SslBundle bundle) {
        try {
            X509ExtendedKeyManager nextKeys = keyManager(bundleName, bundle);
            X509ExtendedTrustManager nextTrust = trustManager(bundleName, bundle);
            keys.replace(nextKeys);
            trust.replace(nextTrust);
            log.info("SSL bundle '{}' changed: new replica connections use its certificate and CAs", bundleName);
        } catch (RuntimeException e) {
            // Half-written files, say: keep what works, the next change is picked up again.
            log.error("SSL bundle '{}' changed but cannot be used; the replica port keeps the previous certificate and CAs: {}",
                    bundleName, e.getMessage());
        }
    }

    private static X509ExtendedKeyManager keyManager(String name, SslBundle bundle) {
        if (bundle.getStores().getKeyStore() == null) {
            throw new IllegalStateException("SSL bundle '" + name + "' has no keystore: the replica protocol's mutual TLS needs the node's "
                    + "certificate and private key (spring.ssl.bundle.pem." + name + ".keystore.certificate and .private-key)");
        }
        return Arrays.stream(bundle.getManagers().getKeyManagers()).filter(X509ExtendedKeyManager.class::isInstance)
                .map(X509ExtendedKeyManager.class::cast).findFirst()
                .orElseThrow(() -> new IllegalStateException("SSL bundle '" + name + "' has no X.509 key manager"));
    }

    private static X509ExtendedTrustManager trustManager(String name, SslBundle bundle) {
        // Without a truststore of its own the JDK would trust every public CA: anyone could get a
        // certificate that passes.
        if (bundle.getStores().getTrustStore() == null) {
            throw new IllegalStateException("SSL bundle '" + name + "' has no truststore: the replica protocol's mutual TLS needs the "
                    + "cluster's CA (spring.ssl.bundle.pem." + name + ".truststore.certificate)");
        }
        return Arrays.stream(bundle.getManagers().getTrustManagers()).filter(X509ExtendedTrustManager.class::isInstance)
                .map(X509ExtendedTrustManager.class::cast).findFirst()
                .orElseThrow(() -> new IllegalStateException("SSL bundle '" + name + "' has no X.509 trust manager"));
    }
}
