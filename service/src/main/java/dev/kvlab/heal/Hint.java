package dev.kvlab.heal;

import dev.kvlab.storage.Record;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A write a peer missed, as {@link HintStore} keeps it: under {@code [peer hash:8][time:8][sequence:8]},
 * so a peer's hints lie together, oldest first; the value is
 * {@code [peer name length:2][peer name][key length:4][key][record]}.
 */
record Hint(byte[] id, String node, byte[] key, Record record, int encodedBytes) {

    static final int ID_BYTES = 24;

    static byte[] encodeValue(String node, byte[] key, Record record) {
        byte[] name = node.getBytes(StandardCharsets.UTF_8);
        byte[] stored = record.encoded();
        return ByteBuffer.allocate(2 + name.length + 4 + key.length + stored.length)
                .putShort((short) name.length).put(name)
                .putInt(key.length).put(key)
                .put(stored)
                .array();
    }

    /** When the hint was kept, in milliseconds since the epoch. */
    long time() {
        return ByteBuffer.wrap(id).getLong(8);
    }

    static Hint decode(byte[] id, byte[] value) {
        ByteBuffer buffer = ByteBuffer.wrap(value);
        byte[] name = new byte[Short.toUnsignedInt(buffer.getShort())];
        buffer.get(name);
        byte[] key = new byte[buffer.getInt()];
        buffer.get(key);
        byte[] stored = new byte[buffer.remaining()];
        buffer.get(stored);
        return new Hint(id, new String(name, StandardCharsets.UTF_8), key, Record.decode(stored), value.length);
    }
}
