package dev.kvlab.peer;

import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * The frames of a records stream between nodes: {@code [key length:4][key][record length:4][record]},
 * lengths big-endian. {@link Decoder} reassembles frames from buffers cut anywhere by the network.
 */
public final class RecordFrames {

    private RecordFrames() {
    }

    public static DataBuffer encode(Entry entry, DataBufferFactory buffers) {
        byte[] key = entry.key();
        byte[] record = entry.record().encoded();
        DataBuffer buffer = buffers.allocateBuffer(8 + key.length + record.length);
        writeInt(buffer, key.length);
        buffer.write(key);
        writeInt(buffer, record.length);
        return buffer.write(record);
    }

    private static void writeInt(DataBuffer buffer, int value) {
        buffer.write(new byte[] {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value});
    }

    /**
     * Stateful, one per stream: fills the fields of the current frame straight from the incoming
     * buffers (each byte is copied once). Refuses lengths larger than a key or a value can be, so a
     * corrupt stream cannot make it allocate without bound.
     */
    static final class Decoder {

        private final int maxKeyLength;
        private final int maxRecordLength;
        private final byte[] length = new byte[4];
        /** The field being filled: a length, the key, or the record. */
        private byte[] field = length;
        private int filled;
        private byte[] key;

        Decoder(int maxKeyLength, long maxValueLength) {
            this.maxKeyLength = maxKeyLength;
            this.maxRecordLength = (int) Math.min(Integer.MAX_VALUE - 16, maxValueLength + Record.MAX_HEADER_BYTES);
        }

        /** The entries this buffer completes, in order; releases the buffer. */
        List<Entry> decode(DataBuffer buffer) {
            List<Entry> entries = new ArrayList<>(1);
            try {
                while (buffer.readableByteCount() > 0) {
                    int count = Math.min(field.length - filled, buffer.readableByteCount());
                    buffer.read(field, filled, count);
                    filled += count;
                    if (filled == field.length) {
                        Entry completed = fieldComplete();
                        if (completed != null) {
                            entries.add(completed);
                        }
                    }
                }
            } finally {
                DataBufferUtils.release(buffer);
            }
            return entries;
        }

        /** Moves to the next field; returns the entry when the record field was the one completed. */
        private Entry fieldComplete() {
            filled = 0;
            if (field == length && key == null) {
                key = new byte[checked(readInt(length), maxKeyLength, "key")];
                field = key;
            } else if (field == key) {
                field = length;
            } else if (field == length) {
                field = new byte[checked(readInt(length), maxRecordLength, "record")];
            } else {
                Entry entry = new Entry(key, Record.decode(field));
                key = null;
                field = length;
                return entry;
            }
            return field.length == 0 ? fieldComplete() : null;
        }

        /** Throws if the stream ended inside a frame. */
        void finish() {
            if (key != null || filled > 0) {
                throw new IllegalStateException("the records stream ended inside a frame");
            }
        }

        private static int checked(int value, int maximum, String what) {
            if (value < 0 || value > maximum) {
                throw new IllegalStateException("corrupt records stream: a " + what + " of " + value + " bytes");
            }
            return value;
        }

        private static int readInt(byte[] bytes) {
            return (bytes[0] & 0xff) << 24 | (bytes[1] & 0xff) << 16 | (bytes[2] & 0xff) << 8 | bytes[3] & 0xff;
        }
    }
}
