package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.KvClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.test.StepVerifier;

/** The client side of the batch stream against a peer whose behaviour the test chooses. */
class PeerStreamTest {

    private static final Duration TIMEOUT = Duration.ofMillis(300);

    private final AtomicInteger streamsOpened = new AtomicInteger();
    /** Streams with these numbers (from 1) read their frames and never answer. */
    private final List<Integer> silentStreams = Collections.synchronizedList(new ArrayList<>());
    private final List<Integer> closingStreams = Collections.synchronizedList(new ArrayList<>());
    private DisposableServer peer;

    @AfterEach
    void stopPeer() {
        if (peer != null) {
            peer.disposeNow();
        }
    }

    @Test
    void batchesShareOneStreamAndAreAnsweredInOrder() {
        PeerStream stream = streamTo(startPeer());

        for (int i = 0; i < 5; i++) {
            StepVerifier.create(stream.send(List.of(write("k" + i), new StoreOp.Read(bytes("k" + i))), null))
                    .assertNext(answers -> assertThat(answers).containsExactly(Outcome.DONE, Outcome.ABSENT))
                    .verifyComplete();
        }
        assertThat(streamsOpened).as("one stream for every batch").hasValue(1);
    }

    @Test
    void aBatchThatTimesOutEndsItsStreamAndTheNextBatchOpensANewOne() {
        silentStreams.add(1);
        PeerStream stream = streamTo(startPeer());

        StepVerifier.create(stream.send(List.of(write("lost")), null).timeout(TIMEOUT))
                .expectError(TimeoutException.class)
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(stream.send(List.of(write("next")), null).timeout(TIMEOUT))
                .assertNext(answers -> assertThat(answers).containsExactly(Outcome.DONE))
                .verifyComplete();
        assertThat(streamsOpened).hasValue(2);
    }

    @Test
    void aPeerThatEndsItsStreamFailsWhatWaitsAndTheNextBatchOpensANewOne() {
        closingStreams.add(1);
        PeerStream stream = streamTo(startPeer());

        StepVerifier.create(stream.send(List.of(write("first")), null).timeout(TIMEOUT))
                .assertNext(answers -> assertThat(answers).containsExactly(Outcome.DONE))
                .verifyComplete();
        // The peer ended stream 1 after its first answer: the next batch goes on stream 2.
        StepVerifier.create(Mono.delay(Duration.ofMillis(100)).then(stream.send(List.of(write("second")), null)).timeout(TIMEOUT))
                .assertNext(answers -> assertThat(answers).containsExactly(Outcome.DONE))
                .verifyComplete();
        assertThat(streamsOpened).hasValue(2);
    }

    @Test
    void aPeerThatIsGoneFailsTheBatchAtOnce() {
        int port = startPeer();
        peer.disposeNow();
        peer = null;

        StepVerifier.create(streamTo(port).send(List.of(write("nowhere")), null).timeout(Duration.ofSeconds(5)))
                .expectErrorMatches(error -> !(error instanceof TimeoutException))
                .verify(Duration.ofSeconds(5));
    }

    private int startPeer() {
        peer = HttpServer.create().port(0).route(routes -> routes.post(ReplicaProtocol.STREAM_PATH, this::answer)).bindNow();
        return peer.port();
    }

    /** Answers every call of every frame as done or absent, unless the stream is told otherwise. */
    private Mono<Void> answer(HttpServerRequest request, HttpServerResponse response) {
        int number = streamsOpened.incrementAndGet();
        BatchFrames.Decoder decoder = new BatchFrames.Decoder(1 << 20);
        Flux<ByteBuf> answers = request.receive()
                .map(buffer -> decoder.decode(buffer.nioBuffer()))
                .concatMapIterable(frames -> frames)
                .map(frame -> {
                    List<StoreOp> ops = ReplicaBatch.decodeCalls(ByteBuffer.wrap(frame, 0, frame.length - PeerAuthentication.TAG_BYTES), 64, 1024, 1024);
                    List<Outcome> results = ops.stream().map(op -> op instanceof StoreOp.Write ? Outcome.DONE : Outcome.ABSENT).toList();
                    return ReplicaBatch.answerFrame(results);
                });
        if (silentStreams.contains(number)) {
            return request.receive().then(Mono.never());
        }
        return response.send(closingStreams.contains(number) ? answers.take(1) : answers).then();
    }

    private static PeerStream streamTo(int port) {
        return new PeerStream("http://127.0.0.1:" + port, WebClient.create(), KvClient.signer("a secret"), 1, 1024, 64 * 1024);
    }

    private static StoreOp.Write write(String key) {
        byte[] value = Record.newValueArray(1);
        return new StoreOp.Write(bytes(key), Record.value(new Version(System.currentTimeMillis(), 1), value));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
