package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The signature of a replica call: what it covers, and that a node takes a call once. */
class PeerAuthenticationTest {

    static final String NODE = "http://kvlab-0.kvlab-headless.default.svc.cluster.local:7070";
    static final String TARGET = "/internal/v1/record?id=ledger-a1-00001";
    static final byte[] SECRET = "s3cret-of-the-cluster".getBytes(StandardCharsets.UTF_8);

    final AtomicLong now = new AtomicLong(1_700_000_000_000L);
    final PeerAuthentication node0 = new PeerAuthentication(SECRET, now::get, 60_000, () -> NODE);

    @Test
    void aCallSignedByTheScriptsAndTheLabIsTakenOnceAndOnlyByTheNodeItWasSignedFor() {
        // The same header as loadtests' test_ledger and scripts/replica-call.sh make (openssl).
        String header = "kvlab-hmac-sha256 t=1700000000000,n=0123456789abcdef.1,b=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=,"
                + "s=cOkMhM8wFb/vYd1C697zoa2dRvT2/5mfwbSz9UpygBs=";
        PeerAuthentication node1 = new PeerAuthentication(SECRET, now::get, 60_000, () -> NODE.replace("kvlab-0", "kvlab-1"));

        assertRefused(() -> node1.verify("GET", TARGET, null, header, false), 401, "for another node");
        PeerAuthentication.Call call = node0.verify("GET", TARGET, null, header, false);
        call.checkNoBody();
        assertThat(call.signedMillis()).isEqualTo(1_700_000_000_000L);
        assertRefused(() -> node0.verify("GET", TARGET, null, header, false), 401, "a replay");
    }

    @Test
    void theSignatureCoversTheMethodTargetVersionAndBodyAndItsTimeMustBeWithinTheSkew() {
        PeerAuthentication signer = new PeerAuthentication(SECRET, now::get, 60_000, () -> "");
        byte[] body = "value".getBytes(StandardCharsets.UTF_8);

        String put = signer.authorization(NODE, "PUT", TARGET, "17.1", body);
        assertRefused(() -> node0.verify("POST", TARGET, "17.1", put, false), 401, "signature does not match");
        assertRefused(() -> node0.verify("PUT", TARGET + "x", "17.1", put, false), 401, "signature does not match");
        assertRefused(() -> node0.verify("PUT", TARGET, "18.1", put, false), 401, "signature does not match");
        assertRefused(() -> node0.verify("PUT", TARGET, "17.1", put, true), 401, "a batch stream is signed with b=frames");
        PeerAuthentication.Call call = node0.verify("PUT", TARGET, "17.1", put, false);
        assertRefused(() -> call.checkBody("evil!".getBytes(StandardCharsets.UTF_8), 0, 5), 401, "not the one its signature covers");
        call.checkBody(body, 0, body.length);

        String late = signer.authorization(NODE, "GET", TARGET, null, (byte[]) null);
        now.addAndGet(60_001);
        assertRefused(() -> node0.verify("GET", TARGET, null, late, false), 401, "outside the tolerated clock skew");
    }

    @Test
    void aStreamsFramesMustComeWithTheirMacsInOrder() {
        PeerAuthentication signer = new PeerAuthentication(SECRET, now::get, 60_000, () -> "");
        PeerAuthentication.StreamOpening opening = signer.openStream(NODE);
        byte[] first = ReplicaBatch.frameCalls(List.of(new dev.kvlab.storage.StoreOp.Read("a".getBytes(StandardCharsets.UTF_8))));
        byte[] second = ReplicaBatch.frameCalls(List.of(new dev.kvlab.storage.StoreOp.Read("b".getBytes(StandardCharsets.UTF_8))));
        opening.frames().seal(first);
        opening.frames().seal(second);

        PeerAuthentication.FrameMacs inOrder = node0.verify("POST", ReplicaProtocol.STREAM_PATH, null, opening.authorization(), true).frames();
        assertThat(inOrder.verify(bodyOf(first))).isTrue();
        assertThat(inOrder.verify(bodyOf(second))).isTrue();
        assertThat(inOrder.verify(bodyOf(second))).as("a frame replayed").isFalse();

        PeerAuthentication.StreamOpening other = signer.openStream(NODE);
        PeerAuthentication.FrameMacs reordered = node0.verify("POST", ReplicaProtocol.STREAM_PATH, null, other.authorization(), true).frames();
        assertThat(reordered.verify(bodyOf(second))).as("a frame of another stream, or out of order").isFalse();
    }

    @Test
    void theReplayWindowTakesEachNumberOnceAcceptsSomeDisorderAndForgetsSessionsOutsideTheSkew() {
        ReplayWindow window = new ReplayWindow(60_000, 2);
        long t = 1_000_000;
        assertThat(window.accept(1, 10, t, t)).isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.accept(1, 12, t, t)).isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.accept(1, 11, t, t)).as("out of order").isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.accept(1, 11, t, t)).isEqualTo(ReplayWindow.Verdict.REPLAYED);
        assertThat(window.accept(1, 12 + ReplayWindow.WINDOW, t, t)).isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.accept(1, 12, t, t)).as("older than the window").isEqualTo(ReplayWindow.Verdict.TOO_OLD);
        assertThat(window.accept(1, 13, t, t)).as("the oldest number in the window, never taken").isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.accept(1, 13, t, t)).isEqualTo(ReplayWindow.Verdict.REPLAYED);
        assertThat(window.accept(2, 1, t, t)).isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.accept(3, 1, t, t)).as("full: refused, not forgotten early").isEqualTo(ReplayWindow.Verdict.FULL);
        assertThat(window.accept(3, 1, t, t + 60_001)).as("once the others' calls are outside the skew").isEqualTo(ReplayWindow.Verdict.FRESH);
        assertThat(window.sessions()).isEqualTo(1);
    }

    private static byte[] bodyOf(byte[] frame) {
        return java.util.Arrays.copyOfRange(frame, BatchFrames.LENGTH_BYTES, frame.length);
    }

    private static void assertRefused(Runnable call, int status, String why) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(PeerAuthentication.Refused.class, refused -> {
            assertThat(refused.status()).isEqualTo(status);
            assertThat(refused.getMessage()).contains(why);
        });
    }
}
