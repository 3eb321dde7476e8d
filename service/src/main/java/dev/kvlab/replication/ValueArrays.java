package dev.kvlab.replication;

import dev.kvlab.storage.Record;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/** Moves a value from the network into the array a {@link Record} will own: the one copy it needs. */
public final class ValueArrays {

    private ValueArrays() {
    }

    /** The buffer's bytes in an array from {@link Record#newValueArray(int)}; releases the buffer. */
    public static byte[] copyOf(DataBuffer body) {
        try {
            int length = body.readableByteCount();
            byte[] valueArray = Record.newValueArray(length);
            body.read(valueArray, Record.HEADER_BYTES, length);
            return valueArray;
        } finally {
            DataBufferUtils.release(body);
        }
    }
}
