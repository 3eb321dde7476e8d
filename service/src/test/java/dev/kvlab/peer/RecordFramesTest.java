package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;

class RecordFramesTest {

    final DefaultDataBufferFactory buffers = DefaultDataBufferFactory.sharedInstance;

    @Test
    void framesSurviveBeingCutAtEveryByte() {
        List<Entry> sent = List.of(
                entry("a", "first", false), entry("b", "", false), entry("c", null, true), entry("ключ", "значение", false));
        byte[] stream = encodeAll(sent);

        for (int piece = 1; piece <= 7; piece++) {
            RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);
            List<Entry> received = new ArrayList<>();
            for (int offset = 0; offset < stream.length; offset += piece) {
                int length = Math.min(piece, stream.length - offset);
                DataBuffer buffer = buffers.allocateBuffer(length).write(stream, offset, length);
                received.addAll(decoder.decode(buffer));
            }
            decoder.finish();
            assertThat(received).as("pieces of %d bytes", piece).hasSize(4);
            for (int i = 0; i < sent.size(); i++) {
                assertThat(received.get(i).key()).isEqualTo(sent.get(i).key());
                assertThat(received.get(i).record().encoded()).isEqualTo(sent.get(i).record().encoded());
            }
        }
    }

    @Test
    void aStreamEndingInsideAFrameIsAnError() {
        byte[] stream = encodeAll(List.of(entry("a", "value", false)));
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);
        decoder.decode(buffers.wrap(java.util.Arrays.copyOf(stream, stream.length - 1)));

        assertThatThrownBy(decoder::finish).hasMessageContaining("ended inside a frame");
    }

    @Test
    void absurdLengthsAreRefusedBeforeAllocating() {
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);

        assertThatThrownBy(() -> decoder.decode(buffers.wrap(new byte[] {0x7f, 0, 0, 0})))
                .hasMessageContaining("corrupt records stream");
    }

    private byte[] encodeAll(List<Entry> entries) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Entry entry : entries) {
            DataBuffer buffer = RecordFrames.encode(entry, buffers);
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            out.writeBytes(bytes);
        }
        return out.toByteArray();
    }

    private static Entry entry(String key, String value, boolean tombstone) {
        Version version = new Version(42, 7);
        if (tombstone) {
            return new Entry(key.getBytes(StandardCharsets.UTF_8), Record.tombstone(version));
        }
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        byte[] array = Record.newValueArray(bytes.length);
        System.arraycopy(bytes, 0, array, Record.HEADER_BYTES, bytes.length);
        return new Entry(key.getBytes(StandardCharsets.UTF_8), Record.value(version, array));
    }
}
