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
                () -> System.currentTimeMillis() - 600_000, 60_000);
        PeerAuthentication otherSecret = new PeerAuthentication("another-cluster-secret".getBytes(StandardCharsets.UTF_8),
                System::currentTimeMillis, 60_000);
        KvClient anyone = new KvClient(cluster.url(0));

        for (Call call : forgeries()) {
            assertRefused(anyone.send(call.method(), call.target(), call.body(), call.headers()), call, "must be signed");
            assertRefused(anyone.send(call.method(), call.target(), call.body(), withHeader(call.headers(), "Authorization",
                    otherSecret.authorization(call.method(), call.target(), FAR_FUTURE))), call, "signature does not match");
            assertRefused(anyone.send(call.method(), call.target(), call.body(), withHeader(call.headers(), "Authorization",
                    skewed.authorization(call.method(), call.target(), FAR_FUTURE))), call, "ms away from this node's clock");
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

        HttpResponse<byte[]> garbage = node.send("POST", "/internal/v1/stream", BodyPublishers.ofByteArray(ByteBuffer.allocate(11).putInt(7).put("garbage".getBytes(StandardCharsets.UTF_8)).array()));
        assertThat(garbage.statusCode()).isEqualTo(400);
        assertThat(text(garbage)).startsWith("bad batch: ").contains("unknown kind");
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
