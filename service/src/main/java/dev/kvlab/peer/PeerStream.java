package dev.kvlab.peer;

import dev.kvlab.replication.ReplicaException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.StoreOp;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

/**
 * Sends one peer's batches over a long-lived exchange with the shared {@link WebClient}
 * ({@link ReplicaProtocol#STREAM_PATH}): the request body is a stream of call frames, the response a
 * stream of answer frames in the same order ({@link BatchFrames}). A batch then costs a frame each
 * way, not a request and a response with a connection taken from the pool and given back.
 *
 * <p>The stream opens with the first batch, and again with the next batch after it ended. It ends
 * when the peer ends it (the peer is stopping), when it fails (the peer went away), or when a batch
 * on it is cancelled (its timeout fired: the peer may be gone without a word); every batch still
 * waiting on it then fails, and its connection is closed. Frames waiting to be written are bounded
 * by the batcher: at most {@code maxInFlight} batches are on their way.
 */
final class PeerStream implements PeerBatcher.Sender {

    private final String node;
    private final WebClient client;
    private final URI uri;
    private final int maxInFlight;
    private final long maxValueLength;
    private final long maxAnswerBytes;
    private Exchange current;

    /** {@code maxAnswerBytes} bounds an answer frame, so a corrupt stream cannot make it allocate without bound. */
    PeerStream(String node, WebClient client, int maxInFlight, long maxValueLength, long maxAnswerBytes) {
        this.node = node;
        this.client = client;
        this.uri = URI.create(node + ReplicaProtocol.STREAM_PATH);
        this.maxInFlight = maxInFlight;
        this.maxValueLength = maxValueLength;
        this.maxAnswerBytes = maxAnswerBytes;
    }

    @Override
    public Mono<List<Outcome>> send(List<StoreOp> ops) {
        return Mono.create(sink -> {
            byte[] frame = ReplicaBatch.frameCalls(ops);
            Exchange exchange = openExchange();
            sink.onCancel(() -> exchange.end(new ReplicaException(node, "did not answer a batch in time")));
            exchange.send(new Waiting(ops, sink), frame);
        });
    }

    private synchronized Exchange openExchange() {
        if (current == null || current.ended()) {
            current = new Exchange();
        }
        return current;
    }

    private record Waiting(List<StoreOp> ops, MonoSink<List<Outcome>> sink) {
    }

    /** One stream: the frames to write, the batches waiting for their answers, and the exchange. */
    private final class Exchange {

        private final Sinks.Many<DataBuffer> frames = Sinks.many().unicast().onBackpressureBuffer(Queues.<DataBuffer>get(maxInFlight).get());
        private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
        private final BatchFrames.Decoder decoder = new BatchFrames.Decoder(maxAnswerBytes);
        private final Disposable subscription;
        private boolean ended;

        Exchange() {
            subscription = client.post().uri(uri)
                    .contentType(MediaType.APPLICATION_OCTET_STREAM)
                    .body(frames.asFlux(), DataBuffer.class)
                    .exchangeToFlux(response -> response.statusCode().value() == HttpStatus.OK.value()
                            ? response.bodyToFlux(DataBuffer.class)
                            : response.releaseBody().thenMany(Flux.error(new ReplicaException(node, "answered " + response.statusCode().value()))))
                    .subscribe(this::received, this::end, () -> end(new ReplicaException(node, "ended the batch stream")));
        }

        synchronized boolean ended() {
            return ended;
        }

        void send(Waiting batch, byte[] frame) {
            synchronized (this) {
                if (!ended) {
                    waiting.add(batch);
                    if (frames.tryEmitNext(DefaultDataBufferFactory.sharedInstance.wrap(frame)).isSuccess()) {
                        return;
                    }
                    waiting.removeLast();
                }
            }
            batch.sink().error(new ReplicaException(node, "the batch stream ended before the batch could be sent"));
        }

        private void received(DataBuffer buffer) {
            List<byte[]> bodies = new ArrayList<>(1);
            try (DataBuffer.ByteBufferIterator views = buffer.readableByteBuffers()) {
                views.forEachRemaining(view -> bodies.addAll(decoder.decode(view)));
                for (byte[] body : bodies) {
                    Waiting answered;
                    synchronized (this) {
                        answered = waiting.poll();
                    }
                    if (answered == null) {
                        throw new ReplicaException(node, "answered a batch it was not sent");
                    }
                    answered.sink().success(ReplicaBatch.decodeAnswers(ByteBuffer.wrap(body), answered.ops(), maxValueLength, node));
                }
            } catch (RuntimeException e) {
                end(e);
            } finally {
                DataBufferUtils.release(buffer);
            }
        }

        /** Ends the stream, once: closes its connection and fails the batches still waiting. */
        void end(Throwable cause) {
            List<Waiting> failed;
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
                failed = List.copyOf(waiting);
                waiting.clear();
                frames.tryEmitComplete();
            }
            if (subscription != null) {
                subscription.dispose();
            }
            for (Waiting batch : failed) {
                batch.sink().error(cause);
            }
        }
    }
}
