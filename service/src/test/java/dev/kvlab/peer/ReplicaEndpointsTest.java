package dev.kvlab.peer;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.Optional;
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
        List<Optional<Record>> answers = ReplicaBatch.decodeAnswers(ByteBuffer.wrap(answered.body()),
                ReplicaBatch.decodeCalls(ByteBuffer.wrap(calls), 64, 1024, 1024), 1024);
        assertThat(answers.get(1)).as("the read after the write in the same batch sees it").isPresent();
        assertThat(answers.get(2)).isEmpty();
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
        assertThat(ReplicaBatch.decodeAnswers(ByteBuffer.wrap(answers.get(0)), first, 1024)).containsExactly(Optional.empty());
        List<Optional<Record>> read = ReplicaBatch.decodeAnswers(ByteBuffer.wrap(answers.get(1)), second, 1024);
        assertThat(read.get(0)).as("the frame after the write sees it").isPresent();
        assertThat(read.get(1)).isEmpty();

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
}
