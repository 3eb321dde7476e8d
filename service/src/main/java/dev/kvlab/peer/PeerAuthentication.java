package dev.kvlab.peer;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Who may speak the replica protocol: a caller that holds the cluster's secret. Every request
 * carries {@code Authorization: kvlab-hmac-sha256 t=<milliseconds>,s=<signature>}, where the
 * signature is HMAC-SHA256 under the secret over
 * {@code <method>\n<request target>\n<milliseconds>\n<X-Kvlab-Version header or nothing>},
 * in standard base64. A node checks it, and the time against its own clock within the cluster's
 * tolerated skew, before it reads a byte of the body.
 *
 * <p>Why a shared-secret HMAC and not mutual TLS: it needs no certificates to issue and rotate, works
 * on the plain HTTP the nodes already speak, and costs one HMAC per request, or per stream for the
 * long-lived batch streams. What it does not do: encrypt, or sign bodies. Whoever can watch or alter
 * traffic between nodes (not merely reach a port) can read values, and can replay a request head
 * with a body of their own while its time is within the skew. Such networks need encryption below
 * kvlab (a service mesh's mTLS, WireGuard).
 */
public final class PeerAuthentication {

    public static final String SCHEME = "kvlab-hmac-sha256";
    private static final String ALGORITHM = "HmacSHA256";

    private final SecretKeySpec key;
    private final LongSupplier wallMillis;
    private final long maxSkewMillis;
    private final ThreadLocal<Mac> macs;

    /** {@code secret} null: a node outside any cluster, which signs nothing and refuses every call. */
    public PeerAuthentication(byte[] secret, LongSupplier wallMillis, long maxSkewMillis) {
        this.key = secret == null ? null : new SecretKeySpec(secret, ALGORITHM);
        this.wallMillis = wallMillis;
        this.maxSkewMillis = maxSkewMillis;
        this.macs = ThreadLocal.withInitial(this::newMac);
    }

    /** The Authorization header of a request: the method, the target (path and raw query) and the version header, or null. */
    public String authorization(String method, String target, String version) {
        if (key == null) {
            throw new IllegalStateException("this node has no cluster secret (kvlab.cluster.secret-file) to sign replica calls with");
        }
        long time = wallMillis.getAsLong();
        return SCHEME + " t=" + time + ",s=" + signature(method, target, time, version);
    }

    /** Null when the request is authentic; otherwise why it is not, for the caller's 401. */
    public String refusal(String method, String target, String version, String authorization) {
        if (key == null) {
            return "this node is not part of a cluster (it has no kvlab.cluster.secret): it takes no replica calls";
        }
        if (authorization == null) {
            return "replica calls must be signed with the cluster's secret (Authorization: " + SCHEME + " t=...,s=...)";
        }
        String prefix = SCHEME + " t=";
        int comma = authorization.indexOf(",s=");
        if (!authorization.startsWith(prefix) || comma < 0) {
            return "malformed Authorization header: expected " + SCHEME + " t=<milliseconds>,s=<signature>";
        }
        long time;
        try {
            time = Long.parseLong(authorization, prefix.length(), comma, 10);
        } catch (NumberFormatException e) {
            return "malformed Authorization header: its time is not a number";
        }
        long skew = Math.abs(time - wallMillis.getAsLong());
        if (skew > maxSkewMillis) {
            return "the call was signed " + skew + " ms away from this node's clock; at most " + maxSkewMillis
                    + " ms are tolerated (kvlab.cluster.max-clock-skew)";
        }
        byte[] expected = signature(method, target, time, version).getBytes(StandardCharsets.US_ASCII);
        byte[] given = authorization.substring(comma + 3).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, given) ? null : "the call's signature does not match the cluster's secret";
    }

    private String signature(String method, String target, long time, String version) {
        String signed = method + '\n' + target + '\n' + time + '\n' + (version == null ? "" : version);
        return Base64.getEncoder().encodeToString(macs.get().doFinal(signed.getBytes(StandardCharsets.UTF_8)));
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available in this JVM", e);
        }
    }
}
