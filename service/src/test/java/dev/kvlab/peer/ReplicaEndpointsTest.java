package dev.kvlab.peer;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.replication.ReplicaRefusedException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The replica protocol's endpoints as a peer sees them, on real nodes. */
class ReplicaEndpointsTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    /** The version of a forger who wants a key to keep their value forever. */
    static final String FAR_FUTURE = "9223372036854775807.2147483647";

    @Test
    void aCallNotSignedWithTheClustersSecretGets401OnEveryEndpointAndChangesNothing() {
        KvClient node = cluster.client(0);
        assertThat(node.put("guarded", "before".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
        PeerAuthentication skewed = new PeerAuthentication(cluster.secret().getBytes(StandardCharsets.UTF_8),
                () -> System.currentTimeMillis() - 600_000, 60_000, () -> "");
        PeerAuthentication otherSecret = new PeerAuthentication("another-cluster-secret".getBytes(StandardCharsets.UTF_8),
                System::currentTimeMillis, 60_000, () -> "");
        KvClient anyone = new KvClient(cluster.url(0));

        for (Call call : forgeries()) {
            assertRefused(anyone.send(call.method(), call.target(), call.body(), call.headers()), call, "must be signed");
            assertRefused(anyone.send(call.method(), call.target(), call.body(), withHeader(call.headers(), "Authorization",
                    signed(otherSecret, call))), call, "signature does not match");
            HttpResponse<byte[]> late = anyone.send(call.method(), call.target(), call.body(), withHeader(call.headers(), "Authorization",
                    signed(skewed, call)));
            assertRefused(late, call, "outside the tolerated clock skew");
            assertThat(text(late)).as("the node's clock offset is not told").doesNotContainPattern("[0-9]{4}");
            assertRefused(anyone.send(call.method(), call.target(), call.body(), withHeader(call.headers(), "Authorization",
                    "kvlab-hmac-sha256 t=x,s=y")), call, "malformed Authorization");
        }

        assertThat(text(node.get("guarded", "3/3"))).isEqualTo("before");
        assertThat(node.put("guarded", "after".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
        assertThat(text(node.get("guarded", "3/3"))).isEqualTo("after");
    }

    @Test
    void aVersionFarAheadOfTheReplicasClockIsRefusedEvenWhenSignedSoNoPeerCanPinAKey() {
        KvClient peer = cluster.client(1);

        HttpResponse<byte[]> single = peer.send("PUT", "/internal/v1/record?id=pinned", BodyPublishers.ofString("evil"),
                ReplicaProtocol.VERSION_HEADER, FAR_FUTURE);
        assertThat(single.statusCode()).isEqualTo(400);
        assertThat(text(single)).contains("ms ahead of this node's clock").contains("kvlab.cluster.max-clock-skew");
        List<StoreOp> ops = List.of(new StoreOp.Write(bytes("pinned"), Record.tombstone(Version.parse(FAR_FUTURE))), writeOf(bytes("beside"), 'b'));
        HttpResponse<byte[]> batch = peer.send("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(ReplicaBatch.encodeCalls(ops)));
        List<Outcome> outcomes = ReplicaBatch.decodeAnswers(ByteBuffer.wrap(batch.body()), ops, 1024, "node 1");
        assertThat(((ReplicaRefusedException) ((Outcome.Failed) outcomes.get(0)).error()).reason())
                .isEqualTo(ReplicaRefusedException.Reason.VERSION_AHEAD);
        assertThat(outcomes.get(1)).as("the other call of the batch is stored").isEqualTo(Outcome.DONE);

        assertThat(peer.internalRecord("pinned").statusCode()).as("nothing was stored").isEqualTo(404);
        assertThat(peer.put("pinned", "good".getBytes(StandardCharsets.UTF_8), "3/3").statusCode()).isEqualTo(201);
        assertThat(text(peer.get("pinned", "3/3"))).isEqualTo("good");
    }

    @Test
    void replicaEndpointsRefuseWritesWithoutAVersion() {
        HttpResponse<byte[]> response = cluster.client(0).send("PUT", "/internal/v1/record?id=x",
                java.net.http.HttpRequest.BodyPublishers.ofString("v"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(text(response)).contains("X-Kvlab-Version");
    }

    @Test
    void aReplicaWriteStoresItsBodyUnderItsVersionAndLosesToANewerOne() {
        KvClient node = cluster.client(1);
        String record = "/internal/v1/record?id=versioned";
        // Versions older than any the clocks give, so no node's clock moves.
        assertThat(node.send("PUT", record, BodyPublishers.ofString("newer"), ReplicaProtocol.VERSION_HEADER, "2.1").statusCode()).isEqualTo(201);
        assertThat(node.send("PUT", record, BodyPublishers.ofString("older"), ReplicaProtocol.VERSION_HEADER, "1.1").statusCode()).isEqualTo(201);

        HttpResponse<byte[]> stored = node.internalRecord("versioned");
        assertThat(text(stored)).isEqualTo("newer");
        assertThat(stored.headers().firstValue(ReplicaProtocol.VERSION_HEADER)).hasValue("2.1");
    }

    @Test
    void theBatchEndpointRunsCallsInOrderAndRefusesBadBodiesWithWhy() {
        KvClient node = cluster.client(2);
        byte[] key = "batched".getBytes(StandardCharsets.UTF_8);
        byte[] calls = ReplicaBatch.encodeCalls(List.of(
                writeOf(key, 'v'), new StoreOp.Read(key), new StoreOp.Read("never-written".getBytes(StandardCharsets.UTF_8))));

        HttpResponse<byte[]> answered = node.send("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(calls));

        assertThat(answered.statusCode()).isEqualTo(200);
        List<Outcome> answers = ReplicaBatch.decodeAnswers(ByteBuffer.wrap(answered.body()),
                ReplicaBatch.decodeCalls(ByteBuffer.wrap(calls), 64, 1024, 1024), 1024, "node 2");
        assertThat(answers.get(1)).as("the read after the write in the same batch sees it").isInstanceOf(Outcome.Found.class);
        assertThat(answers.get(2)).isEqualTo(Outcome.ABSENT);
        assertThat(text(node.internalRecord("batched"))).isEqualTo("v");

        HttpResponse<byte[]> garbage = node.send("POST", "/internal/v1/batch", BodyPublishers.ofString("garbage"));
        assertThat(garbage.statusCode()).isEqualTo(400);
        assertThat(text(garbage)).startsWith("bad batch: ").contains("unknown kind");
        HttpResponse<byte[]> empty = node.send("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(new byte[0]));
        assertThat(empty.statusCode()).isEqualTo(400);
        assertThat(text(empty)).contains("the batch has no calls");
    }

    @Test
    void theStreamEndpointAnswersEachFrameInOrderAndRefusesABadOneWithWhy() {
        KvClient node = cluster.client(1);
        byte[] key = "streamed".getBytes(StandardCharsets.UTF_8);
        List<StoreOp> first = List.of(writeOf(key, 's'));
        List<StoreOp> second = List.of(new StoreOp.Read(key), new StoreOp.Read("never-written".getBytes(StandardCharsets.UTF_8)));
        ByteArrayOutputStream frames = new ByteArrayOutputStream();
        frames.writeBytes(ReplicaBatch.frameCalls(first));
        frames.writeBytes(ReplicaBatch.frameCalls(second));

        HttpResponse<byte[]> answered = node.send("POST", "/internal/v1/stream", BodyPublishers.ofByteArray(frames.toByteArray()));

        assertThat(answered.statusCode()).isEqualTo(200);
        List<byte[]> answers = new BatchFrames.Decoder(1024).decode(ByteBuffer.wrap(answered.body()));
        assertThat(answers).as("one answer frame per call frame").hasSize(2);
        assertThat(ReplicaBatch.decodeAnswers(ByteBuffer.wrap(answers.get(0)), first, 1024, "node 1")).containsExactly(Outcome.DONE);
        List<Outcome> read = ReplicaBatch.decodeAnswers(ByteBuffer.wrap(answers.get(1)), second, 1024, "node 1");
        assertThat(read.get(0)).as("the frame after the write sees it").isInstanceOf(Outcome.Found.class);
        assertThat(read.get(1)).isEqualTo(Outcome.ABSENT);

        HttpResponse<byte[]> garbage = node.send("POST", "/internal/v1/stream", BodyPublishers.ofByteArray(
                ByteBuffer.allocate(4 + 7 + PeerAuthentication.TAG_BYTES).putInt(7 + PeerAuthentication.TAG_BYTES)
                        .put("garbage".getBytes(StandardCharsets.UTF_8)).array()));
        assertThat(garbage.statusCode()).isEqualTo(400);
        assertThat(text(garbage)).startsWith("bad batch: ").contains("unknown kind");
    }

    @Test
    void aCapturedCallSentAgainIsRefusedAsAReplay() {
        KvClient peer = cluster.client(0);
        HttpRequest captured = peer.request("PUT", "/internal/v1/record?id=replayed", BodyPublishers.ofString("once"),
                ReplicaProtocol.VERSION_HEADER, new Version(System.currentTimeMillis(), 1).toString());
        assertThat(KvClient.send(captured).statusCode()).isEqualTo(201);

        HttpResponse<byte[]> again = KvClient.send(captured);

        assertThat(again.statusCode()).isEqualTo(401);
        assertThat(text(again)).contains("a replay");
        // A batch, with its body, the same way.
        HttpRequest batch = peer.request("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(
                ReplicaBatch.encodeCalls(List.of(writeOf(bytes("replayed-batch"), 'b')))));
        assertThat(KvClient.send(batch).statusCode()).isEqualTo(200);
        assertThat(KvClient.send(batch).statusCode()).isEqualTo(401);
    }

    @Test
    void aCallSignedForOneNodeIsRefusedByAnother() {
        HttpRequest forNode0 = cluster.client(0).request("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(
                ReplicaBatch.encodeCalls(List.of(writeOf(bytes("redirected"), 'r')))));

        HttpResponse<byte[]> atNode1 = KvClient.send(HttpRequest.newBuilder(forNode0, (name, value) -> true)
                .uri(URI.create(cluster.url(1) + "/internal/v1/batch")).build());

        assertThat(atNode1.statusCode()).isEqualTo(401);
        assertThat(text(atNode1)).contains("signature does not match").contains("for another node");
        assertThat(cluster.client(1).internalRecord("redirected").statusCode()).as("nothing stored on node 1").isEqualTo(404);
        assertThat(KvClient.send(forNode0).statusCode()).as("the node it was signed for takes it").isEqualTo(200);
    }

    @Test
    void aSignedHeadWithAnotherBodyIsRefusedBeforeTheBodyIsUsed() {
        KvClient peer = cluster.client(2);
        List<StoreOp> signedOps = List.of(writeOf(bytes("rebodied-signed"), 's'));
        List<StoreOp> otherOps = List.of(writeOf(bytes("rebodied-evil"), 'e'));
        HttpRequest batch = peer.request("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(ReplicaBatch.encodeCalls(signedOps)));
        HttpRequest single = peer.request("PUT", "/internal/v1/record?id=rebodied-single", BodyPublishers.ofString("good"),
                ReplicaProtocol.VERSION_HEADER, new Version(System.currentTimeMillis(), 1).toString());

        HttpResponse<byte[]> otherBatch = KvClient.send(HttpRequest.newBuilder(batch, (name, value) -> true)
                .POST(BodyPublishers.ofByteArray(ReplicaBatch.encodeCalls(otherOps))).build());
        HttpResponse<byte[]> otherValue = KvClient.send(HttpRequest.newBuilder(single, (name, value) -> true)
                .PUT(BodyPublishers.ofString("evil")).build());

        for (HttpResponse<byte[]> refused : List.of(otherBatch, otherValue)) {
            assertThat(refused.statusCode()).isEqualTo(401);
            assertThat(text(refused)).contains("body is not the one its signature covers");
        }
        assertThat(peer.internalRecord("rebodied-evil").statusCode()).as("nothing stored").isEqualTo(404);
        assertThat(peer.internalRecord("rebodied-signed").statusCode()).isEqualTo(404);
        assertThat(peer.internalRecord("rebodied-single").statusCode()).isEqualTo(404);
    }

    @Test
    void aStreamFrameInjectedReplayedOrWithoutItsMacEndsTheStreamAndIsNotStored() {
        KvClient peer = cluster.client(1);
        byte[] first = ReplicaBatch.frameCalls(List.of(writeOf(bytes("frame-kept"), 'k')));
        byte[] second = ReplicaBatch.frameCalls(List.of(writeOf(bytes("frame-xx"), 'x')));

        // Injected: the second frame's calls changed after it was sealed.
        byte[] sealed = sealedBody(peer, first, second);
        int key = sealed.length - PeerAuthentication.TAG_BYTES - 1 - Record.HEADER_BYTES - 4 - 2;
        assertThat(new String(sealed, key, 2, StandardCharsets.UTF_8)).isEqualTo("xx");
        sealed[key] = 'y';
        sealed[key + 1] = 'y';
        assertAnsweredFrames(sendStream(peer, sealed), 1);
        assertThat(peer.internalRecord("frame-yy").statusCode()).as("the injected frame is not taken").isEqualTo(404);
        assertThat(peer.internalRecord("frame-xx").statusCode()).isEqualTo(404);

        // Replayed: the first frame, sealed, sent again as the second.
        byte[] replayed = sealedBody(peer, ReplicaBatch.frameCalls(List.of(writeOf(bytes("frame-twice"), 't'))), second);
        byte[] twice = ByteBuffer.allocate(2 * (replayed.length - second.length)).put(replayed, 0, replayed.length - second.length)
                .put(replayed, 0, replayed.length - second.length).array();
        assertAnsweredFrames(sendStream(peer, twice), 1);

        // Without its MAC, the first frame: 401, nothing stored.
        byte[] unsealed = sealedBody(peer, ReplicaBatch.frameCalls(List.of(writeOf(bytes("frame-unsealed"), 'u'))));
        unsealed[unsealed.length - 1] ^= 1;
        HttpResponse<byte[]> refused = sendStream(peer, unsealed).orElseThrow();
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(text(refused)).contains("does not carry its MAC");
        assertThat(peer.internalRecord("frame-unsealed").statusCode()).isEqualTo(404);
    }

    /** The frames as a signed stream's body: sealed with a new opening, whose header is kept for {@link #sendStream}. */
    private byte[] sealedBody(KvClient peer, byte[]... frames) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (byte[] frame : frames) {
            body.writeBytes(frame);
        }
        streamRequest = peer.request("POST", ReplicaProtocol.STREAM_PATH, BodyPublishers.ofByteArray(body.toByteArray()));
        return KvClient.bytesOf(streamRequest.bodyPublisher().orElseThrow());
    }

    private HttpRequest streamRequest;

    /** The last sealed stream's opening with {@code body}: its answer, or empty when the connection was closed under it. */
    private java.util.Optional<HttpResponse<byte[]>> sendStream(KvClient peer, byte[] body) {
        try {
            return java.util.Optional.of(KvClient.send(HttpRequest.newBuilder(streamRequest, (name, value) -> true)
                    .POST(BodyPublishers.ofByteArray(body)).build()));
        } catch (java.io.UncheckedIOException closed) {
            return java.util.Optional.empty();
        }
    }

    /**
     * The stream was refused (401: the bad frame came in the same network buffer as those before
     * it), or answered {@code frames} frames at the most and ended.
     */
    private static void assertAnsweredFrames(java.util.Optional<HttpResponse<byte[]>> answered, int frames) {
        answered.ifPresent(response -> {
            if (response.statusCode() == 401) {
                assertThat(text(response)).contains("does not carry its MAC");
                return;
            }
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(new BatchFrames.Decoder(1024).decode(ByteBuffer.wrap(response.body()))).hasSizeLessThanOrEqualTo(frames);
        });
    }

    /** A replica write of a one-byte value under a current version. */
    private static StoreOp.Write writeOf(byte[] key, char value) {
        byte[] valueArray = Record.newValueArray(1);
        valueArray[Record.HEADER_BYTES] = (byte) value;
        return new StoreOp.Write(key, Record.value(new Version(System.currentTimeMillis(), 1), valueArray));
    }

    /** One call of each endpoint, each of them a write where it can be one, of the key "guarded". */
    private static List<Call> forgeries() {
        List<StoreOp> write = List.of(new StoreOp.Write(bytes("guarded"), Record.tombstone(Version.parse(FAR_FUTURE))));
        return List.of(
                new Call("PUT", "/internal/v1/record?id=guarded", BodyPublishers.ofString("evil"), ReplicaProtocol.VERSION_HEADER, FAR_FUTURE),
                new Call("DELETE", "/internal/v1/record?id=guarded", BodyPublishers.noBody(), ReplicaProtocol.VERSION_HEADER, FAR_FUTURE),
                new Call("GET", "/internal/v1/record?id=guarded", BodyPublishers.noBody()),
                new Call("GET", "/internal/v1/records?start=a", BodyPublishers.noBody()),
                new Call("POST", "/internal/v1/batch", BodyPublishers.ofByteArray(ReplicaBatch.encodeCalls(write))),
                new Call("POST", "/internal/v1/stream", BodyPublishers.ofByteArray(ReplicaBatch.frameCalls(write))));
    }

    private record Call(String method, String target, java.net.http.HttpRequest.BodyPublisher body, String... headers) {
    }

    /** The call's Authorization header, signed by {@code signer} for node 0 with the call's body. */
    private static String signed(PeerAuthentication signer, Call call) {
        if (call.target().equals(ReplicaProtocol.STREAM_PATH)) {
            return signer.openStream(cluster.url(0)).authorization();
        }
        String version = call.headers().length == 2 ? call.headers()[1] : null;
        return signer.authorization(cluster.url(0), call.method(), call.target(), version, KvClient.bytesOf(call.body()));
    }

    private static String[] withHeader(String[] headers, String name, String value) {
        String[] all = java.util.Arrays.copyOf(headers, headers.length + 2);
        all[headers.length] = name;
        all[headers.length + 1] = value;
        return all;
    }

    private static void assertRefused(HttpResponse<byte[]> response, Call call, String why) {
        assertThat(response.statusCode()).as("%s %s", call.method(), call.target()).isEqualTo(401);
        assertThat(response.headers().firstValue("WWW-Authenticate")).hasValue(PeerAuthentication.SCHEME);
        assertThat(text(response)).as("%s %s", call.method(), call.target()).contains(why);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
