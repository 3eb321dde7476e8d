package dev.kvlab.peer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * The frames of a batch stream ({@link ReplicaProtocol#STREAM_PATH}): each {@link ReplicaBatch} body,
 * calls one way and answers the other, as {@code [length:4][body]}, the length big-endian. A call
 * frame's body ends with its MAC ({@link PeerAuthentication.FrameMacs}): {@code [calls][MAC:32]}.
 * {@link Decoder} reassembles frames from buffers cut anywhere by the network.
 */
public final class BatchFrames {

    /** The bytes of a frame's length. {@link ReplicaBatch#frameCalls} and {@link ReplicaBatch#frameAnswers} write frames. */
    public static final int LENGTH_BYTES = 4;

    private BatchFrames() {
    }

    /**
     * Stateful, one per stream. Refuses a length over {@code maxBody}, so a corrupt stream cannot
     * make it allocate without bound.
     */
    public static final class Decoder {

        private final long maxBody;
        private final IntConsumer reserve;
        private final byte[] length = new byte[LENGTH_BYTES];
        private byte[] field = length;
        private int filled;

        public Decoder(long maxBody) {
            this(maxBody, size -> {
            });
        }

        /** {@code reserve} hears each frame's length before its body is allocated, and may refuse it by throwing. */
        public Decoder(long maxBody, IntConsumer reserve) {
            this.maxBody = maxBody;
            this.reserve = reserve;
        }

        /**
         * The bodies this buffer completes, in order; reads the buffer to its end.
         *
         * @throws IllegalArgumentException for a length over the maximum
         */
        public List<byte[]> decode(ByteBuffer buffer) {
            List<byte[]> bodies = new ArrayList<>(1);
            while (buffer.hasRemaining()) {
                int count = Math.min(field.length - filled, buffer.remaining());
                buffer.get(field, filled, count);
                filled += count;
                if (filled == field.length) {
                    filled = 0;
                    if (field == length) {
                        int size = ByteBuffer.wrap(length).getInt();
                        if (size < 0 || size > maxBody) {
                            throw new IllegalArgumentException("a batch frame of " + size + " bytes, at most " + maxBody + " allowed");
                        }
                        reserve.accept(size);
                        field = new byte[size];
                        if (size > 0) {
                            continue;
                        }
                    }
                    bodies.add(field);
                    field = length;
                }
            }
            return bodies;
        }
    }
}
