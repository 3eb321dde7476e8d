package dev.kvlab.admin;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The credentials that authorize a state-changing call on the management port: the cluster
 * secret and the admin token, either one, sent as {@code Authorization: Bearer <credential>}.
 * A credential is compared by its SHA-256 digest in constant time, against every accepted one,
 * so neither the time of an answer nor its length gives away how much of a guess was right.
 */
public final class ManagementCredentials {

    static final String SCHEME = "Bearer";

    private final List<byte[]> accepted = new ArrayList<>();

    /** Either may be null: a node without a cluster secret, or without an admin token. */
    public ManagementCredentials(byte[] clusterSecret, byte[] adminToken) {
        if (clusterSecret != null) {
            accepted.add(digest(clusterSecret));
        }
        if (adminToken != null) {
            accepted.add(digest(adminToken));
        }
    }

    /** Whether this node has any credential at all; without one it refuses every management write. */
    public boolean configured() {
        return !accepted.isEmpty();
    }

    /** Why a call with this {@code Authorization} header (null when absent) is refused; null when it is authorized. */
    public String refusal(String authorization) {
        if (!configured()) {
            return "this node has no management credential, so it refuses every state-changing management call: set "
                    + "kvlab.management.admin-token-file (or kvlab.cluster.secret-file) and send it as Authorization: Bearer <token>";
        }
        if (authorization == null || authorization.isBlank()) {
            return "a state-changing management call needs a credential: Authorization: Bearer <the cluster secret or the admin token>";
        }
        int space = authorization.indexOf(' ');
        if (space < 0 || !authorization.substring(0, space).toLowerCase(Locale.ROOT).equals(SCHEME.toLowerCase(Locale.ROOT))) {
            return "the management port takes Authorization: Bearer <the cluster secret or the admin token>";
        }
        byte[] given = digest(authorization.substring(space + 1).strip().getBytes(StandardCharsets.UTF_8));
        boolean match = false;
        for (byte[] credential : accepted) {
            match |= MessageDigest.isEqual(credential, given); // no early exit: every credential is compared
        }
        return match ? null : "the credential is neither the cluster secret nor the admin token";
    }

    private static byte[] digest(byte[] credential) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(credential);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
