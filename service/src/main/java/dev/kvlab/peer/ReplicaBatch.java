package dev.kvlab.peer;

import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The bodies of {@code POST /internal/v1/batch}: many single-key calls to one replica in one
 * request, answered in order. Lengths are 4 bytes big-endian; records travel in their stored form.
 *
 * <pre>
 * call:   [kind:1 = READ ][key length:4][key]
 *         [kind:1 = WRITE][key length:4][key][record length:4][record]
 * answer: [kind:1 = DONE] (a write)   [kind:1 = FOUND][record length:4][record]   [kind:1 = ABSENT]
 * </pre>
 */
public final class ReplicaBatch {

    static final byte READ = 1;
    static final byte WRITE = 2;
    static final byte DONE = 0;
    static final byte FOUND = 1;
    static final byte ABSENT = 2;

    private ReplicaBatch() {
    }

    /** The bytes a call takes in a batch body. */
    static int bytesOf(StoreOp op) {
        return 5 + op.key().length + (op instanceof StoreOp.Write write ? 4 + write.record().encoded().length : 0);
    }

    /** The bytes of the largest call there can be: a write of the longest key and the largest value. */
    public static long largestCallBytes(int maxKeyLength, long maxValueLength) {
        return 9L + maxKeyLength + Record.HEADER_BYTES + maxValueLength;
    }

    /** The bytes of the largest answer there can be: a read that found the largest value. */
    static long largestAnswerBytes(long maxValueLength) {
        return 5L + Record.HEADER_BYTES + maxValueLength;
    }

    public static byte[] encodeCalls(List<StoreOp> ops) {
        return encodeCalls(ops, false);
    }

    /** The calls as one frame of a batch stream ({@link BatchFrames}): their length, then the calls. */
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

    /** The answer body: {@code results} as {@link dev.kvlab.storage.LocalStore#batch} gave them for {@code ops}. */
    public static byte[] encodeAnswers(List<StoreOp> ops, List<Optional<Record>> results) {
        return encodeAnswers(ops, results, false);
    }

    /** The answers as one frame of a batch stream ({@link BatchFrames}): their length, then the answers. */
    public static byte[] frameAnswers(List<StoreOp> ops, List<Optional<Record>> results) {
        return encodeAnswers(ops, results, true);
    }

    private static byte[] encodeAnswers(List<StoreOp> ops, List<Optional<Record>> results, boolean framed) {
        int size = 0;
        for (Optional<Record> result : results) {
            size += 1 + result.map(record -> 4 + record.encoded().length).orElse(0);
        }
        ByteBuffer out = allocate(size, framed);
        for (int i = 0; i < ops.size(); i++) {
            Optional<Record> result = results.get(i);
            if (ops.get(i) instanceof StoreOp.Write) {
                out.put(DONE);
            } else if (result.isPresent()) {
                byte[] record = result.get().encoded();
                out.put(FOUND).putInt(record.length).put(record);
            } else {
                out.put(ABSENT);
            }
        }
        return out.array();
    }

    /** A buffer for a body of {@code size} bytes, with room for the frame's length in front when framed (written already). */
    private static ByteBuffer allocate(int size, boolean framed) {
        if (!framed) {
            return ByteBuffer.allocate(size);
        }
        return ByteBuffer.allocate(BatchFrames.LENGTH_BYTES + size).putInt(size);
    }

    /**
     * The answers to {@code ops}, in order: a read's record or empty, empty for a write.
     *
     * @throws IllegalStateException when the body does not answer exactly these calls
     */
    static List<Optional<Record>> decodeAnswers(ByteBuffer body, List<StoreOp> ops, long maxValueLength) {
        List<Optional<Record>> results = new ArrayList<>(ops.size());
        try {
            for (StoreOp op : ops) {
                byte kind = body.get();
                boolean write = op instanceof StoreOp.Write;
                if (write ? kind != DONE : kind != FOUND && kind != ABSENT) {
                    throw new IllegalStateException("answer " + results.size() + " of the batch has kind " + kind + " for a " + (write ? "write" : "read"));
                }
                results.add(kind == FOUND
                        ? Optional.of(record(body, maxValueLength))
                        : Optional.empty());
            }
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new IllegalStateException("the batch's answer is cut short or corrupt at answer " + results.size(), e);
        }
        if (body.hasRemaining()) {
            throw new IllegalStateException("the batch's answer has more answers than calls");
        }
        return results;
    }

    private static Record record(ByteBuffer body, long maxValueLength) {
        return Record.decode(field(body, Record.HEADER_BYTES, maxValueLength + Record.HEADER_BYTES, "record"));
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
