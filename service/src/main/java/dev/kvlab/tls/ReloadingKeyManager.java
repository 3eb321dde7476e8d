package dev.kvlab.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A key manager whose certificate and key can be replaced while servers and clients built on it run:
 * each new handshake asks the current one, so a rotated certificate is presented without a restart.
 */
final class ReloadingKeyManager extends X509ExtendedKeyManager {

    private volatile X509ExtendedKeyManager current;

    ReloadingKeyManager(X509ExtendedKeyManager initial) {
        this.current = initial;
    }

    void replace(X509ExtendedKeyManager next) {
        this.current = next;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return current.getClientAliases(keyType, issuers);
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return current.chooseClientAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return current.chooseEngineClientAlias(keyType, issuers, engine);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return current.getServerAliases(keyType, issuers);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return current.chooseServerAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return current.chooseEngineServerAlias(keyType, issuers, engine);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return current.getCertificateChain(alias);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return current.getPrivateKey(alias);
    }
}
