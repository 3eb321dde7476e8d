package dev.kvlab.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.security.auth.x500.X500Principal;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Made-up CAs and the certificates they sign, for the TLS tests; PEM as a Kubernetes Secret mounts it. */
public final class TestCertificates {

    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    private TestCertificates() {
    }

    /** A certificate with its key; {@code issuer} is null for a CA's own (self-signed) certificate. */
    public record Issued(X509Certificate certificate, KeyPair keys, Issued issuer) {

        public BigInteger serial() {
            return certificate.getSerialNumber();
        }

        public String certificatePem() {
            return pem("CERTIFICATE", encoded());
        }

        public String privateKeyPem() {
            return pem("PRIVATE KEY", keys.getPrivate().getEncoded());
        }

        private byte[] encoded() {
            try {
                return certificate.getEncoded();
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public static Issued ca(String name) {
        KeyPair keys = keys();
        return new Issued(sign(name, keys.getPublic(), new X500Principal("CN=" + name), keys, null), keys, null);
    }

    /** A node's certificate for server and client use, naming 127.0.0.1 and localhost. */
    public static Issued node(Issued ca, String name) {
        return node(ca, name, new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost"));
    }

    /** A node's certificate for server and client use, naming {@code dnsName} only. */
    public static Issued node(Issued ca, String name, String dnsName) {
        return node(ca, name, new GeneralName(GeneralName.dNSName, dnsName));
    }

    private static Issued node(Issued ca, String name, GeneralName... names) {
        KeyPair keys = keys();
        return new Issued(sign(name, keys.getPublic(), ca.certificate().getSubjectX500Principal(), ca.keys(), names), keys, ca);
    }

    /**
     * Writes the node's certificate, key and the trusted CAs (one or more, concatenated) as a
     * Kubernetes Secret volume does: files that are symbolic links through {@code ..data}, which is
     * swapped atomically to a new directory on every update.
     */
    public static void writeSecretVolume(Path dir, Issued node, Issued... trusted) {
        try {
            Files.createDirectories(dir);
            Path version = Files.createDirectory(dir.resolve("..v" + SERIALS.incrementAndGet()));
            Files.writeString(version.resolve("tls.crt"), node.certificatePem());
            Files.writeString(version.resolve("tls.key"), node.privateKeyPem());
            StringBuilder cas = new StringBuilder();
            for (Issued ca : trusted) {
                cas.append(ca.certificatePem());
            }
            Files.writeString(version.resolve("ca.crt"), cas);
            Path data = dir.resolve("..data");
            Path previous = Files.isSymbolicLink(data) ? dir.resolve(Files.readSymbolicLink(data)) : null;
            Path staged = dir.resolve("..data_tmp");
            Files.deleteIfExists(staged);
            Files.createSymbolicLink(staged, version.getFileName());
            Files.move(staged, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            for (String file : new String[] {"tls.crt", "tls.key", "ca.crt"}) {
                if (!Files.isSymbolicLink(dir.resolve(file))) {
                    Files.createSymbolicLink(dir.resolve(file), Path.of("..data", file));
                }
            }
            if (previous != null) {
                for (String file : new String[] {"tls.crt", "tls.key", "ca.crt"}) {
                    Files.deleteIfExists(previous.resolve(file));
                }
                Files.deleteIfExists(previous);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A client's TLS context: presents {@code own} (none when null) and trusts {@code trusted}. */
    public static SSLContext sslContext(Issued own, Issued... trusted) {
        try {
            KeyStore keyStore = KeyStore.getInstance("PKCS12");
            keyStore.load(null, null);
            if (own != null) {
                keyStore.setKeyEntry("own", own.keys().getPrivate(), new char[0],
                        new java.security.cert.Certificate[] {own.certificate(), own.issuer().certificate()});
            }
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(keyStore, new char[0]);
            KeyStore trustStore = KeyStore.getInstance("PKCS12");
            trustStore.load(null, null);
            for (int i = 0; i < trusted.length; i++) {
                trustStore.setCertificateEntry("ca" + i, trusted[i].certificate());
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trustStore);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KeyPair keys() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static X509Certificate sign(String subject, java.security.PublicKey key, X500Principal issuer, KeyPair issuerKeys,
                                        GeneralName[] names) {
        try {
            Instant now = Instant.now();
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer,
                    BigInteger.valueOf(SERIALS.incrementAndGet()), Date.from(now.minus(Duration.ofMinutes(5))),
                    Date.from(now.plus(Duration.ofDays(1))), new X500Principal("CN=" + subject), key);
            if (names == null) {
                builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
                builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            } else {
                builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
                builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
                builder.addExtension(Extension.extendedKeyUsage, false,
                        new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
                builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
            }
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate())));
        } catch (Exception e) {
            throw new IllegalStateException("cannot make a test certificate", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der) + "\n-----END " + type
                + "-----\n";
    }
}
