package dev.kvlab.peer;

import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.replication.ReplicaRefusedException;
import dev.kvlab.replication.VersionTooFarAheadException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StorageFullException;
import dev.kvlab.storage.StoreOp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * The bodies of {@code POST /internal/v1/batch}: many single-key calls to one replica in one
 * request, answered in order. Lengths are 4 bytes big-endian; records travel in their stored form.
 *
 * <pre>
 * call:   [kind:1 = READ ][key length:4][key]
 *         [kind:1 = WRITE][key length:4][key][record length:4][record]
 * answer: [kind:1 = DONE] (a write)   [kind:1 = FOUND][record length:4][record]   [kind:1 = ABSENT]
 *         [kind:1 = REFUSED][reason:1][message length:2][message, UTF-8]
 * </pre>
 *
 * A refused call fails alone: the replica refused its version, or had no room for it, or its disk
 * is full ({@link ReplicaRefusedException.Reason}).
 */
public final class ReplicaBatch {

    static final byte READ = 1;
    static final byte WRITE = 2;
    static final byte DONE = 0;
    static final byte FOUND = 1;
    static final byte ABSENT = 2;
    static final byte REFUSED = 3;
    /** A refusal's message is cut to this many bytes. */
    static final int MAX_MESSAGE_BYTES = 1024;
    /** A found record of this size or more joins an answer as it is, without a copy. */
    private static final int SHARED_RECORD_BYTES = 4096;

    private ReplicaBatch() {
    }

    /** The bytes a call takes in a batch body. */
    static int bytesOf(StoreOp op) {
        return 5 + op.key().length + (op instanceof StoreOp.Write write ? 4 + write.record().encoded().length : 0);
    }

    /** The bytes of the largest call there can be: a write of the longest key and the largest value. */
    public static long largestCallBytes(int maxKeyLength, long maxValueLength) {
        return 9L + maxKeyLength + Record.MAX_HEADER_BYTES + maxValueLength;
    }

    /** The bytes of the largest answer there can be: a read that found the largest value. */
    static long largestAnswerBytes(long maxValueLength) {
        return 5L + Record.MAX_HEADER_BYTES + maxValueLength;
    }

    public static byte[] encodeCalls(List<StoreOp> ops) {
        return encodeCalls(ops, false);
    }

    /**
     * The calls as one frame of a batch stream ({@link BatchFrames}): its length, the calls, and room
     * for the frame's MAC, which {@link PeerAuthentication.FrameMacs#seal} writes.
     */
    public static byte[] frameCalls(List<StoreOp> ops) {
        return encodeCalls(ops, true);
    }

    private static byte[] encodeCalls(List<StoreOp> ops, boolean framed) {
        int size = 0;
        for (StoreOp op : ops) {
            size += bytesOf(op);
        }
        ByteBuffer out = allocate(size, framed);
        for (StoreOp op : ops) {
            switch (op) {
                case StoreOp.Read read -> out.put(READ).putInt(read.key().length).put(read.key());
                case StoreOp.Write write -> {
                    byte[] record = write.record().encoded();
                    out.put(WRITE).putInt(write.key().length).put(write.key()).putInt(record.length).put(record);
                }
            }
        }
        return out.array();
    }

    /**
     * The calls of a request body.
     *
     * @throws IllegalArgumentException with a message for the client when the body is not a batch
     *                                  within the limits
     */
    public static List<StoreOp> decodeCalls(ByteBuffer body, int maxCalls, int maxKeyLength, long maxValueLength) {
        List<StoreOp> ops = new ArrayList<>();
        try {
            while (body.hasRemaining()) {
                if (ops.size() == maxCalls) {
                    throw new IllegalArgumentException("a batch holds at most " + maxCalls + " calls");
                }
                byte kind = body.get();
                if (kind != READ && kind != WRITE) {
                    throw new IllegalArgumentException("call " + ops.size() + " of the batch has unknown kind " + kind);
                }
                byte[] key = field(body, 1, maxKeyLength, "key");
                ops.add(kind == READ
                        ? new StoreOp.Read(key)
                        : new StoreOp.Write(key, record(body, maxValueLength)));
            }
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("the batch ends inside call " + ops.size());
        }
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("the batch has no calls");
        }
        return ops;
    }

    /** The answer body: the outcome of each call, as {@link dev.kvlab.storage.LocalStore#batch} gave them. */
    public static ByteBuf answers(List<Outcome> outcomes) {
        return answers(outcomes, false);
    }

    /** The answers as one frame of a batch stream ({@link BatchFrames}): their length, then the answers. */
    public static ByteBuf answerFrame(List<Outcome> outcomes) {
        return answers(outcomes, true);
    }

    /**
     * The answers in a buffer that shares the found records' arrays instead of copying them, so an
     * answer of large values does not take their size twice while it waits to be written.
     */
    private static ByteBuf answers(List<Outcome> outcomes, boolean framed) {
        CompositeByteBuf out = Unpooled.compositeBuffer(Math.max(2, 2 * outcomes.size() + 1));
        ByteBuf small = Unpooled.buffer(framed ? BatchFrames.LENGTH_BYTES + 64 : 64);
        if (framed) {
            small.writeInt(0); // the frame's length, written last
        }
        for (Outcome outcome : outcomes) {
            switch (outcome) {
                case Outcome.Done done -> small.writeByte(DONE);
                case Outcome.Absent absent -> small.writeByte(ABSENT);
                case Outcome.Found found -> {
                    byte[] record = found.record().encoded();
                    small.writeByte(FOUND).writeInt(record.length);
                    if (record.length < SHARED_RECORD_BYTES) {
                        small.writeBytes(record);
                    } else {
                        out.addComponent(true, small);
                        out.addComponent(true, Unpooled.wrappedBuffer(record));
                        small = Unpooled.buffer(64);
                    }
                }
                case Outcome.Failed failed -> {
                    byte[] message = messageOf(failed.error());
                    small.writeByte(REFUSED).writeByte(reasonOf(failed.error()).ordinal()).writeShort(message.length).writeBytes(message);
                }
            }
        }
        out.addComponent(true, small);
        if (framed) {
            out.setInt(0, out.readableBytes() - BatchFrames.LENGTH_BYTES);
        }
        return out;
    }

    /** Why a call failed, as the caller learns it. */
    static ReplicaRefusedException.Reason reasonOf(RuntimeException error) {
        return switch (error) {
            case VersionTooFarAheadException e -> ReplicaRefusedException.Reason.VERSION_AHEAD;
            case RejectedExecutionException e -> ReplicaRefusedException.Reason.OVERLOADED;
            case OverBudgetException e -> ReplicaRefusedException.Reason.OVERLOADED;
            case StorageFullException e -> ReplicaRefusedException.Reason.DISK_FULL;
            default -> ReplicaRefusedException.Reason.FAILED;
        };
    }

    private static byte[] messageOf(RuntimeException error) {
        String text = error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
        byte[] message = text.getBytes(StandardCharsets.UTF_8);
        return message.length <= MAX_MESSAGE_BYTES ? message : Arrays.copyOf(message, MAX_MESSAGE_BYTES);
    }

    /**
     * A buffer for calls of {@code size} bytes; framed, with the frame's length in front (written
     * already) and room for its MAC behind.
     */
    private static ByteBuffer allocate(int size, boolean framed) {
        if (!framed) {
            return ByteBuffer.allocate(size);
        }
        return ByteBuffer.allocate(BatchFrames.LENGTH_BYTES + size + PeerAuthentication.TAG_BYTES).putInt(size + PeerAuthentication.TAG_BYTES);
    }

    /**
     * The outcomes of {@code ops} on {@code node}, from a whole answer body; a refused call's is a
     * failure with {@link ReplicaRefusedException}. Holds no memory budget: for bodies already read.
     *
     * @throws IllegalStateException when the body does not answer exactly these calls
     */
    static List<Outcome> decodeAnswers(ByteBuffer body, List<StoreOp> ops, long maxValueLength, String node) {
        AnswerDecoder decoder = new AnswerDecoder(ops, null, maxValueLength, node);
        decoder.decode(body, body.remaining());
        if (!decoder.complete()) {
            throw new IllegalStateException("the batch's answer is cut short at answer " + decoder.outcomes().size());
        }
        return decoder.outcomes();
    }

    /** A record whose value is at most {@code maxValueLength}, behind a header of either length ({@link Record#headerBytes}). */
    private static Record record(ByteBuffer body, long maxValueLength) {
        byte[] stored = field(body, Record.HEADER_BYTES, maxValueLength + Record.MAX_HEADER_BYTES, "record");
        Record record = Record.decode(stored);
        if (record.valueLength() > maxValueLength) {
            throw new IllegalArgumentException("a record of " + stored.length + " bytes, whose value is over " + maxValueLength + " bytes");
        }
        return record;
    }

    private static byte[] field(ByteBuffer body, int minimum, long maximum, String what) {
        int length = body.getInt();
        if (length < minimum || length > maximum) {
            throw new IllegalArgumentException("a " + what + " of " + length + " bytes (allowed " + minimum + " to " + maximum + ")");
        }
        if (length > body.remaining()) {
            throw new BufferUnderflowException();
        }
        byte[] bytes = new byte[length];
        body.get(bytes);
        return bytes;
    }
}
