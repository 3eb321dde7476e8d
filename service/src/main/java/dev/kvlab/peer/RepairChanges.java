package dev.kvlab.peer;

import dev.kvlab.storage.Record;
import dev.kvlab.storage.RecordHeader;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A repair round's exchange of changed keys ({@link ReplicaProtocol#REPAIR_CHANGES_PATH}): what the
 * initiator asks ({@link Request}), and what the responder answers, all at one snapshot of its store:
 * its bucket hashes, the number of the update they were taken at, if asked the keys it changed
 * recently with their headers, and the headers of the keys asked for at the update named.
 *
 * <pre>
 * request: [repair request length:4][repair request]([recent:1][generation:8][key count:4]{[length:2][key]}*)
 * answer:  [bucket hashes:8 each][generation:8][recent count:4]{key}*[looked up count:4]{key}*
 * key:     [length:2][key][state:1: 0 not known, 1 no record, 2 a record][header length:1][header], the header only in state 2
 * </pre>
 */
public record RepairChanges(long[] hashes, long generation, List<KeyState> recent, List<KeyState> looked) {

    private static final int NOT_KNOWN = 0;
    private static final int NO_RECORD = 1;
    private static final int A_RECORD = 2;

    /** A key's header as the responder knows it: not {@code known}, or known, null when it has no record. */
    public record KeyState(byte[] key, boolean known, RecordHeader header) {
    }

    /**
     * What the initiator asks: the {@code request}'s bucket hashes, and with them either, if
     * {@code recent}, the keys changed after update {@code generation} (0: every change kept), or the
     * headers of {@code keys} at update {@code generation}.
     */
    public record Request(RepairRequest request, boolean recent, long generation, List<byte[]> keys) {

        public byte[] encode() {
            byte[] head = request.encode();
            ByteArrayOutputStream out = new ByteArrayOutputStream(head.length + 17 + keys.size() * 24);
            out.writeBytes(ByteBuffer.allocate(4).putInt(head.length).array());
            out.writeBytes(head);
            out.writeBytes(ByteBuffer.allocate(13).put((byte) (recent ? 1 : 0)).putLong(generation).putInt(keys.size()).array());
            for (byte[] key : keys) {
                out.writeBytes(ByteBuffer.allocate(2).putShort((short) key.length).array());
                out.writeBytes(key);
            }
            return out.toByteArray();
        }

        /**
         * @throws IllegalArgumentException with a message for the caller when the body is not a request
         */
        public static Request decode(ByteBuffer body, int maxKeyLength) {
            try {
                int length = body.getInt();
                if (length < 0 || length > body.remaining()) {
                    throw new IllegalArgumentException("a changed keys request with a bad length");
                }
                RepairRequest request = RepairRequest.decode(body.slice(body.position(), length));
                body.position(body.position() + length);
                boolean recent = body.get() != 0;
                long generation = body.getLong();
                int count = body.getInt();
                if (count < 0 || count > body.remaining() / 2) {
                    throw new IllegalArgumentException("a changed keys request with a bad key count");
                }
                List<byte[]> keys = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    keys.add(key(body, maxKeyLength));
                }
                if (body.hasRemaining()) {
                    throw new IllegalArgumentException("a changed keys request with bytes after its end");
                }
                return new Request(request, recent, generation, keys);
            } catch (BufferUnderflowException e) {
                throw new IllegalArgumentException("a changed keys request cut short");
            }
        }
    }

    public byte[] encode() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(hashes.length * 8 + 16 + (recent.size() + looked.size()) * 40);
        ByteBuffer head = ByteBuffer.allocate(hashes.length * Long.BYTES + 8);
        head.asLongBuffer().put(hashes);
        head.putLong(hashes.length * Long.BYTES, generation);
        out.writeBytes(head.array());
        write(out, recent);
        write(out, looked);
        return out.toByteArray();
    }

    private static void write(ByteArrayOutputStream out, List<KeyState> keys) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(keys.size()).array());
        for (KeyState state : keys) {
            out.writeBytes(ByteBuffer.allocate(2).putShort((short) state.key().length).array());
            out.writeBytes(state.key());
            if (!state.known()) {
                out.write(NOT_KNOWN);
            } else if (state.header() == null) {
                out.write(NO_RECORD);
            } else {
                byte[] header = Record.of(state.header()).encoded();
                out.write(A_RECORD);
                out.write(header.length);
                out.writeBytes(header);
            }
        }
    }

    /**
     * @throws IllegalArgumentException when the body is not an answer of {@code buckets} buckets
     */
    public static RepairChanges decode(ByteBuffer body, int buckets, int maxKeyLength) {
        try {
            long[] hashes = new long[buckets];
            for (int i = 0; i < buckets; i++) {
                hashes[i] = body.getLong();
            }
            long generation = body.getLong();
            List<KeyState> recent = read(body, maxKeyLength);
            List<KeyState> looked = read(body, maxKeyLength);
            if (body.hasRemaining()) {
                throw new IllegalArgumentException("changed keys with bytes after their end");
            }
            return new RepairChanges(hashes, generation, recent, looked);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("changed keys cut short");
        }
    }

    private static List<KeyState> read(ByteBuffer body, int maxKeyLength) {
        int count = body.getInt();
        if (count < 0 || count > body.remaining() / 3) {
            throw new IllegalArgumentException("changed keys with a bad count");
        }
        List<KeyState> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] key = key(body, maxKeyLength);
            int state = body.get();
            switch (state) {
                case NOT_KNOWN -> keys.add(new KeyState(key, false, null));
                case NO_RECORD -> keys.add(new KeyState(key, true, null));
                case A_RECORD -> {
                    byte[] header = new byte[Byte.toUnsignedInt(body.get())];
                    body.get(header);
                    keys.add(new KeyState(key, true, RecordHeader.of(header)));
                }
                default -> throw new IllegalArgumentException("a changed key of unknown state " + state);
            }
        }
        return keys;
    }

    private static byte[] key(ByteBuffer body, int maxKeyLength) {
        int length = Short.toUnsignedInt(body.getShort());
        if (length > maxKeyLength) {
            throw new IllegalArgumentException("a key of " + length + " bytes, longer than " + maxKeyLength);
        }
        byte[] key = new byte[length];
        body.get(key);
        return key;
    }
}
