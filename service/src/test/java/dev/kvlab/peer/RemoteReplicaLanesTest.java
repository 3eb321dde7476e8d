package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.replication.ReplicationMetrics;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.replication.TimeoutTimer;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.KvClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.test.StepVerifier;

/**
 * A peer answers a stream's frames in order. A small call must not wait behind a large one's answer:
 * calls with large records go on a stream of their own.
 */
class RemoteReplicaLanesTest {

    private static final int MAX_VALUE = 256 * 1024;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** Frames with a large call are answered once this completes; frames without one at once. */
    private final Sinks.Empty<Void> largeAnswered = Sinks.empty();
    private final AtomicInteger streamsOpened = new AtomicInteger();
    private final TimeoutTimer timer = new TimeoutTimer(Duration.ofMillis(10));
    private DisposableServer peer;

    @AfterEach
    void stop() {
        largeAnswered.tryEmitEmpty();
        if (peer != null) {
            peer.disposeNow();
        }
        timer.close();
    }

    @Test
    void aSmallWriteIsAnsweredWhileALargeOneWaitsForItsAnswer() {
        RemoteReplica replica = replicaOf(startPeer(), DataSize.ofKilobytes(64));

        var large = replica.write(bytes("large"), record(100 * 1024)).toFuture();
        StepVerifier.create(replica.write(bytes("small"), record(100)))
                .verifyComplete();
        assertThat(large).as("the large write still waits for its answer").isNotDone();

        largeAnswered.tryEmitEmpty();
        StepVerifier.create(Mono.fromFuture(large)).verifyComplete();
        assertThat(streamsOpened).as("a stream for each lane").hasValue(2);
    }

    @Test
    void aReadExpectedSmallIsAnsweredWhileOneExpectedLargeWaits() {
        RemoteReplica replica = replicaOf(startPeer(), DataSize.ofKilobytes(64));

        var large = replica.read(bytes("large"), 100 * 1024, null).toFuture();
        StepVerifier.create(replica.read(bytes("small"), 100, null))
                .assertNext(found -> assertThat(found).isEmpty())
                .verifyComplete();
        assertThat(large).isNotDone();

        largeAnswered.tryEmitEmpty();
        StepVerifier.create(Mono.fromFuture(large)).assertNext(found -> assertThat(found).isEmpty()).verifyComplete();
    }

    @Test
    void withoutALargeRecordsLaneTheSmallCallWaitsItsTurn() {
        RemoteReplica replica = replicaOf(startPeer(), DataSize.ofBytes(0));

        var large = replica.write(bytes("large"), record(100 * 1024)).toFuture();
        var small = replica.write(bytes("small"), record(100)).toFuture();
        StepVerifier.create(Mono.delay(Duration.ofMillis(300))).expectNextCount(1).verifyComplete();
        assertThat(small).as("behind the large call on the one stream").isNotDone();

        largeAnswered.tryEmitEmpty();
        StepVerifier.create(Mono.fromFuture(small)).verifyComplete();
        assertThat(large).isDone();
        assertThat(streamsOpened).hasValue(1);
    }

    private RemoteReplica replicaOf(int port, DataSize largeRecord) {
        return new RemoteReplica("http://127.0.0.1:" + port, WebClient.create(), KvClient.signer("a secret"), timer, TIMEOUT, TIMEOUT,
                1024, MAX_VALUE, new ReplicationProperties.Batch(1, 64, DataSize.ofKilobytes(256), 1024, true, largeRecord),
                new ReplicationMetrics(new SimpleMeterRegistry()));
    }

    private int startPeer() {
        peer = HttpServer.create().port(0).route(routes -> routes.post(ReplicaProtocol.STREAM_PATH, this::answer)).bindNow();
        return peer.port();
    }

    /** Answers each frame in order, as a replica does: writes done, reads absent; a frame with a large call once released. */
    private Mono<Void> answer(HttpServerRequest request, HttpServerResponse response) {
        streamsOpened.incrementAndGet();
        BatchFrames.Decoder decoder = new BatchFrames.Decoder(1 << 20);
        return response.send(request.receive()
                .map(buffer -> decoder.decode(buffer.nioBuffer()))
                .concatMapIterable(frames -> frames)
                .concatMap(frame -> {
                    List<StoreOp> ops = ReplicaBatch.decodeCalls(ByteBuffer.wrap(frame, 0, frame.length - PeerAuthentication.TAG_BYTES),
                            64, 1024, MAX_VALUE);
                    List<Outcome> results = ops.stream().map(op -> op instanceof StoreOp.Write ? Outcome.DONE : Outcome.ABSENT).toList();
                    boolean large = ops.stream().anyMatch(op -> new String(op.key(), StandardCharsets.UTF_8).equals("large"));
                    Mono<Void> before = large ? largeAnswered.asMono() : Mono.empty();
                    return before.then(Mono.fromSupplier(() -> ReplicaBatch.answerFrame(results)));
                }, 1)).then();
    }

    private static Record record(int valueBytes) {
        return Record.value(new Version(System.currentTimeMillis(), 1), Record.newValueArray(valueBytes));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
