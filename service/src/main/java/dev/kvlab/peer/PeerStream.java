package dev.kvlab.peer;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.ReplicaException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.StoreOp;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

/**
 * Sends one peer's batches over a long-lived exchange with the shared {@link WebClient}
 * ({@link ReplicaProtocol#STREAM_PATH}): the request body is a stream of call frames, the response a
 * stream of answer frames in the same order ({@link BatchFrames}). A batch then costs a frame each
 * way, not a request and a response with a connection taken from the pool and given back. The
 * stream's opening is signed ({@link PeerAuthentication#openStream}), and each call frame carries
 * its MAC, over its number on the stream and its calls, so no frame can be injected, replayed or
 * reordered. Answer
 * frames are decoded as their bytes arrive ({@link AnswerDecoder}), each record held on its call's
 * lease, so no answer frame is ever held whole.
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
    private final PeerAuthentication authentication;
    private final URI uri;
    private final int maxInFlight;
    private final long maxValueLength;
    private final long maxAnswerBytes;
    private Exchange current;

    /** {@code maxAnswerBytes} bounds an answer frame's declared length, so a corrupt stream is caught early. */
    PeerStream(String node, WebClient client, PeerAuthentication authentication, int maxInFlight, long maxValueLength,
               long maxAnswerBytes) {
        this.node = node;
        this.client = client;
        this.authentication = authentication;
        this.uri = URI.create(node + ReplicaProtocol.STREAM_PATH);
        this.maxInFlight = maxInFlight;
        this.maxValueLength = maxValueLength;
        this.maxAnswerBytes = maxAnswerBytes;
    }

    @Override
    public Mono<List<Outcome>> send(List<StoreOp> ops, List<MemoryBudget.Lease> leases) {
        return Mono.create(sink -> {
            byte[] frame = ReplicaBatch.frameCalls(ops);
            Exchange exchange = openExchange();
            sink.onCancel(() -> exchange.end(new ReplicaException(node, "did not answer a batch in time")));
            exchange.send(new Waiting(new AnswerDecoder(ops, leases, maxValueLength, node), sink), frame);
        });
    }

    private synchronized Exchange openExchange() {
        if (current == null || current.ended()) {
            current = new Exchange();
        }
        return current;
    }

    private record Waiting(AnswerDecoder answers, MonoSink<List<Outcome>> sink) {
    }

    /** One stream: the frames to write, the batches waiting for their answers, and the exchange. */
    private final class Exchange {

        private final Sinks.Many<DataBuffer> frames = Sinks.many().unicast().onBackpressureBuffer(Queues.<DataBuffer>get(maxInFlight).get());
        private final PeerAuthentication.StreamOpening opening = authentication.openStream(node);
        private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
        private final Disposable subscription;
        /** The answer frame being read: its length's bytes, then how many of its bytes are still to come. */
        private final ByteBuffer frameLength = ByteBuffer.allocate(BatchFrames.LENGTH_BYTES);
        private long frameLeft = -1;
        private boolean ended;

        Exchange() {
            subscription = client.post().uri(uri)
                    .contentType(MediaType.APPLICATION_OCTET_STREAM)
                    .header(HttpHeaders.AUTHORIZATION, opening.authorization())
                    .body(frames.asFlux(), DataBuffer.class)
                    .exchangeToFlux(response -> response.statusCode().value() == HttpStatus.OK.value()
                            ? response.bodyToFlux(DataBuffer.class)
                            : RefusedCall.<DataBuffer>of(node, response).flux())
                    .subscribe(this::received, this::end, () -> end(new ReplicaException(node, "ended the batch stream")));
        }

        synchronized boolean ended() {
            return ended;
        }

        void send(Waiting batch, byte[] frame) {
            synchronized (this) {
                if (!ended) {
                    waiting.add(batch);
                    // Sealed in the order the frames are written: each MAC covers the frame's number.
                    opening.frames().seal(frame);
                    if (frames.tryEmitNext(DefaultDataBufferFactory.sharedInstance.wrap(frame)).isSuccess()) {
                        return;
                    }
                    waiting.removeLast();
                }
            }
            // Not written: its number is spent, so no later frame would match; the stream ends.
            ReplicaException unsent = new ReplicaException(node, "the batch stream ended before the batch could be sent");
            end(unsent);
            batch.sink().error(unsent);
        }

        /** Feeds the answer frames' bytes to the batches in order; a batch is answered when its frame ends. */
        private void received(DataBuffer buffer) {
            try (DataBuffer.ByteBufferIterator views = buffer.readableByteBuffers()) {
                while (views.hasNext()) {
                    ByteBuffer view = views.next();
                    while (view.hasRemaining()) {
                        read(view);
                    }
                }
            } catch (RuntimeException e) {
                end(e);
            } finally {
                DataBufferUtils.release(buffer);
            }
        }

        private void read(ByteBuffer view) {
            if (frameLeft < 0) {
                while (frameLength.hasRemaining() && view.hasRemaining()) {
                    frameLength.put(view.get());
                }
                if (frameLength.hasRemaining()) {
                    return;
                }
                frameLeft = frameLength.flip().getInt();
                frameLength.clear();
                if (frameLeft < 0 || frameLeft > maxAnswerBytes) {
                    throw new ReplicaException(node, "sent an answer frame of " + frameLeft + " bytes, at most " + maxAnswerBytes + " allowed");
                }
            }
            Waiting answering;
            synchronized (this) {
                answering = waiting.peek();
            }
            if (answering == null) {
                throw new ReplicaException(node, "answered a batch it was not sent");
            }
            int count = (int) Math.min(frameLeft, view.remaining());
            answering.answers().decode(view, count);
            frameLeft -= count;
            if (frameLeft == 0) {
                frameLeft = -1;
                if (!answering.answers().complete()) {
                    throw new ReplicaException(node, "sent an answer frame that does not answer every call of its batch");
                }
                synchronized (this) {
                    waiting.poll();
                }
                answering.sink().success(answering.answers().outcomes());
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
