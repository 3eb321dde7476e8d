package dev.kvlab.peer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Who may speak the replica protocol: a caller that holds the cluster's secret. Every request
 * carries {@code Authorization: kvlab-hmac-sha256 t=<ms>,n=<session>.<sequence>,b=<body>,s=<signature>},
 * the signature HMAC-SHA256 under the secret, in standard base64, over
 * <pre>
 * kvlab-hmac-sha256\n&lt;method&gt;\n&lt;request target&gt;\n&lt;target node&gt;\n&lt;ms&gt;\n&lt;nonce&gt;\n&lt;X-Kvlab-Version or nothing&gt;\n&lt;body&gt;
 * </pre>
 * where the target node is the receiver's own name in the topology (its base URL), the nonce is the
 * signer's random session (16 hex digits) and a sequence number it counts per target node, and
 * {@code body} is the standard base64 of the body's SHA-256, or {@code frames} for a batch stream,
 * whose every frame carries its own MAC ({@link FrameMacs}).
 *
 * <p>A node checks, before the call has any effect: the time against its own clock within the
 * cluster's tolerated skew; the signature, with its own name as the target, so a call signed for
 * another node is refused; the nonce against those it took within the skew ({@link ReplayWindow}),
 * so a call is taken once; and, once the body is read (into the memory budget, bounded by its
 * Content-Length) but before it is used, the body's digest, so a signed head cannot carry another
 * body. An unsigned or forged call is refused before a byte of its body is read.
 *
 * <p>Why a shared-secret HMAC and not only mutual TLS: it needs no certificates to issue and rotate,
 * works on the plain HTTP the nodes already speak, and costs one HMAC and one SHA-256 over the body
 * per request, one HMAC per frame on a stream. What it does not do: encrypt (whoever watches the
 * traffic between nodes reads values), sign answers (whoever can alter traffic can alter what a
 * replica answers), or tell the nodes apart (every holder of the secret may sign as any node, so
 * one node cannot be revoked alone: rotate the secret). Such networks need encryption below or
 * beside it (TLS between pods, a service mesh, WireGuard).
 */
public final class PeerAuthentication {

    public static final String SCHEME = "kvlab-hmac-sha256";
    /** The body field of a batch stream's opening: its frames are signed one by one. */
    public static final String FRAMES = "frames";
    /** The bytes of a frame's MAC, after the frame's calls. */
    public static final int TAG_BYTES = 32;
    private static final String ALGORITHM = "HmacSHA256";
    private static final String FORMAT = SCHEME + " t=<milliseconds>,n=<session>.<sequence>,b=<body digest>,s=<signature>";
    private static final String EMPTY_DIGEST = digest(new byte[0]);

    private final SecretKeySpec key;
    private final LongSupplier wallMillis;
    private final long maxSkewMillis;
    private final Supplier<String> self;
    private final ReplayWindow seen;
    private final String session = HexFormat.of().toHexDigits(new SecureRandom().nextLong());
    private final Map<String, AtomicLong> sequences = new ConcurrentHashMap<>();
    private final ThreadLocal<Mac> macs;

    /**
     * {@code secret} null: a node outside any cluster, which signs nothing and refuses every call.
     * {@code self}: this node's name, the target a call to it must be signed for.
     */
    public PeerAuthentication(byte[] secret, LongSupplier wallMillis, long maxSkewMillis, Supplier<String> self) {
        this.key = secret == null ? null : new SecretKeySpec(secret, ALGORITHM);
        this.wallMillis = wallMillis;
        this.maxSkewMillis = maxSkewMillis;
        this.self = self;
        this.seen = new ReplayWindow(maxSkewMillis);
        this.macs = ThreadLocal.withInitial(() -> newMac(key));
    }

    /** The standard base64 of the SHA-256 of {@code body}: what a signature says of a body. */
    public static String digest(byte[] body) {
        return digest(body, 0, body.length);
    }

    public static String digest(byte[] body, int offset, int length) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(body, offset, length);
            return Base64.getEncoder().encodeToString(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    /** The Authorization header of a call to {@code node} with this body (empty for none). */
    public String authorization(String node, String method, String target, String version, byte[] body) {
        return authorization(node, method, target, version, body == null ? EMPTY_DIGEST : digest(body));
    }

    /** The Authorization header of a call to {@code node} whose body's digest is {@code body}, or {@link #FRAMES}. */
    public String authorization(String node, String method, String target, String version, String body) {
        if (key == null) {
            throw new IllegalStateException("this node has no cluster secret (kvlab.cluster.secret-file) to sign replica calls with");
        }
        long time = wallMillis.getAsLong();
        String nonce = session + '.' + sequences.computeIfAbsent(node, unused -> new AtomicLong()).incrementAndGet();
        return SCHEME + " t=" + time + ",n=" + nonce + ",b=" + body + ",s=" + signature(method, target, node, time, nonce, version, body);
    }

    /** The opening of a batch stream to {@code node}: its Authorization header, and the MACs of its frames. */
    public StreamOpening openStream(String node) {
        String authorization = authorization(node, "POST", ReplicaProtocol.STREAM_PATH, null, FRAMES);
        return new StreamOpening(authorization, frameMacs(authorization.substring(authorization.lastIndexOf(",s=") + 3)));
    }

    /** A stream's Authorization header, and the MACs its frames must carry in order. */
    public record StreamOpening(String authorization, FrameMacs frames) {
    }

    /**
     * The signed call, when its head is authentic and new: the time, the signature and the nonce
     * (taken now: the same head is refused from now on). Its body is checked once read
     * ({@link Call#checkBody}), a stream's frames one by one ({@link Call#frames}).
     *
     * @param streamed whether the call is a batch stream, whose body must be signed as {@link #FRAMES}
     * @throws Refused 401, or 503 when the node remembers too many signers to take a new one
     */
    public Call verify(String method, String target, String version, String authorization, boolean streamed) {
        if (key == null) {
            throw Refused.unauthorized("this node is not part of a cluster (it has no kvlab.cluster.secret): it takes no replica calls");
        }
        if (authorization == null) {
            throw Refused.unauthorized("replica calls must be signed with the cluster's secret (Authorization: " + FORMAT + ")");
        }
        String[] fields = authorization.startsWith(SCHEME + ' ') ? authorization.substring(SCHEME.length() + 1).split(",", -1) : new String[0];
        if (fields.length != 4 || !fields[0].startsWith("t=") || !fields[1].startsWith("n=") || !fields[2].startsWith("b=")
                || !fields[3].startsWith("s=")) {
            throw Refused.unauthorized("malformed Authorization header: expected " + FORMAT);
        }
        long time;
        long session;
        long sequence;
        String nonce = fields[1].substring(2);
        try {
            time = Long.parseLong(fields[0], 2, fields[0].length(), 10);
            int dot = nonce.indexOf('.');
            if (dot != 16) {
                throw new NumberFormatException();
            }
            session = HexFormat.fromHexDigitsToLong(nonce, 0, dot);
            sequence = Long.parseLong(nonce, dot + 1, nonce.length(), 10);
            if (sequence < 1) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            throw Refused.unauthorized("malformed Authorization header: its time or nonce is not a number: expected " + FORMAT);
        }
        long now = wallMillis.getAsLong();
        if (Math.abs(time - now) > maxSkewMillis) {
            throw Refused.unauthorized("the call was signed outside the tolerated clock skew (kvlab.cluster.max-clock-skew)");
        }
        String body = fields[2].substring(2);
        if (streamed != FRAMES.equals(body)) {
            throw Refused.unauthorized(streamed ? "a batch stream is signed with b=" + FRAMES + ": each of its frames carries its MAC"
                    : "the call's body must be signed by its digest (b=<base64 of its SHA-256>)");
        }
        String signature = fields[3].substring(2);
        byte[] expected = signature(method, target, self.get(), time, nonce, version, body).getBytes(StandardCharsets.US_ASCII);
        if (!MessageDigest.isEqual(expected, signature.getBytes(StandardCharsets.US_ASCII))) {
            throw Refused.unauthorized("the call's signature does not match: signed with another secret, for another node, or altered");
        }
        switch (seen.accept(session, sequence, time, now)) {
            case FRESH -> {
            }
            case REPLAYED, TOO_OLD -> throw Refused.unauthorized("this call was taken already (its nonce " + nonce + " was seen): a replay");
            case FULL -> throw new Refused(503, "this node remembers " + ReplayWindow.MAX_SESSIONS
                    + " signers within the tolerated clock skew already: retry later");
        }
        return new Call(time, body, streamed ? frameMacs(signature) : null);
    }

    /** A call whose head is authentic. */
    public static final class Call {
        private final long signedMillis;
        private final String body;
        private final FrameMacs frames;

        private Call(long signedMillis, String body, FrameMacs frames) {
            this.signedMillis = signedMillis;
            this.body = body;
            this.frames = frames;
        }

        /** When the caller signed it, by its clock: within the tolerated skew of this node's. */
        public long signedMillis() {
            return signedMillis;
        }

        /** Checks the body as read against the digest the signature covers; 401 when another body came. */
        public void checkBody(byte[] body, int offset, int length) {
            checkDigest(digest(body, offset, length));
        }

        /** Checks that the call came without a body, as its signature says: the digest of none is a constant. */
        public void checkNoBody() {
            checkDigest(EMPTY_DIGEST);
        }

        private void checkDigest(String digest) {
            if (!MessageDigest.isEqual(body.getBytes(StandardCharsets.US_ASCII), digest.getBytes(StandardCharsets.US_ASCII))) {
                throw Refused.unauthorized("the call's body is not the one its signature covers");
            }
        }

        /** A stream's frame MACs. */
        public FrameMacs frames() {
            if (frames == null) {
                throw new IllegalStateException("not a stream");
            }
            return frames;
        }
    }

    /**
     * The MACs of one stream's frames, in order: HMAC-SHA256 under a key of the stream's own
     * (HMAC-SHA256 under the secret of {@code kvlab-stream-frames\n<the opening's signature>}) over
     * the frame's number (8 bytes, from 0) and its calls. A frame injected, replayed, reordered or
     * taken from another stream does not match. Not thread-safe: one side of one stream.
     */
    public static final class FrameMacs {
        private final Mac mac;
        private long next;

        private FrameMacs(byte[] streamKey) {
            this.mac = newMac(new SecretKeySpec(streamKey, ALGORITHM));
        }

        /** Writes the MAC of the next frame ({@code [length:4][calls][MAC]}) into its last {@link #TAG_BYTES}. */
        public void seal(byte[] frame) {
            byte[] tag = tag(frame, BatchFrames.LENGTH_BYTES, frame.length - BatchFrames.LENGTH_BYTES - TAG_BYTES);
            System.arraycopy(tag, 0, frame, frame.length - TAG_BYTES, TAG_BYTES);
        }

        /** Whether the next frame's body ({@code [calls][MAC]}) carries its MAC. */
        public boolean verify(byte[] body) {
            if (body.length < TAG_BYTES) {
                return false;
            }
            byte[] tag = tag(body, 0, body.length - TAG_BYTES);
            return MessageDigest.isEqual(tag, java.util.Arrays.copyOfRange(body, body.length - TAG_BYTES, body.length));
        }

        private byte[] tag(byte[] bytes, int offset, int length) {
            mac.update(ByteBuffer.allocate(Long.BYTES).putLong(next++).array());
            mac.update(bytes, offset, length);
            return mac.doFinal();
        }
    }

    /** A refused call: 401 (with its reason), or 503. */
    public static final class Refused extends RuntimeException {
        private final int status;

        Refused(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }

        static Refused unauthorized(String message) {
            return new Refused(401, message);
        }

        public int status() {
            return status;
        }
    }

    private FrameMacs frameMacs(String openingSignature) {
        return new FrameMacs(macs.get().doFinal(("kvlab-stream-frames\n" + openingSignature).getBytes(StandardCharsets.US_ASCII)));
    }

    private String signature(String method, String target, String node, long time, String nonce, String version, String body) {
        String signed = SCHEME + '\n' + method + '\n' + target + '\n' + node + '\n' + time + '\n' + nonce + '\n'
                + (version == null ? "" : version) + '\n' + body;
        return Base64.getEncoder().encodeToString(macs.get().doFinal(signed.getBytes(StandardCharsets.UTF_8)));
    }

    private static Mac newMac(SecretKeySpec key) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            if (key != null) {
                mac.init(key);
            }
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available in this JVM", e);
        }
    }
}
