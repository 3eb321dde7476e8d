package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchFramesTest {

    @Test
    void framesSurviveBeingCutAtEveryByte() {
        List<String> sent = List.of("first batch", "", "third, longer than the others: ключ и значение");
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (String body : sent) {
            stream.writeBytes(frame(body.getBytes(StandardCharsets.UTF_8)));
        }
        byte[] bytes = stream.toByteArray();

        for (int piece = 1; piece <= 9; piece++) {
            BatchFrames.Decoder decoder = new BatchFrames.Decoder(1024);
            List<String> received = new ArrayList<>();
            for (int offset = 0; offset < bytes.length; offset += piece) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, Math.min(piece, bytes.length - offset));
                for (byte[] body : decoder.decode(buffer)) {
                    received.add(new String(body, StandardCharsets.UTF_8));
                }
                assertThat(buffer.hasRemaining()).as("a buffer is read to its end").isFalse();
            }
            assertThat(received).as("pieces of %d bytes", piece).isEqualTo(sent);
        }
    }

    @Test
    void aLengthOverTheMaximumIsRefusedBeforeAnythingIsAllocated() {
        BatchFrames.Decoder decoder = new BatchFrames.Decoder(16);

        assertThat(decoder.decode(ByteBuffer.wrap(frame(new byte[16])))).hasSize(1);
        assertThatThrownBy(() -> decoder.decode(ByteBuffer.wrap(new byte[] {0x7f, 0, 0, 0})))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2130706432 bytes, at most 16");
        assertThatThrownBy(() -> new BatchFrames.Decoder(16).decode(ByteBuffer.wrap(new byte[] {(byte) 0xff, 0, 0, 0})))
                .hasMessageContaining("-16777216 bytes");
    }

    @Test
    void batchesAreFramedAsTheirLengthThenTheirBodyAndCallsWithRoomForTheirMac() {
        List<dev.kvlab.storage.StoreOp> ops = List.of(new dev.kvlab.storage.StoreOp.Read("k".getBytes(StandardCharsets.UTF_8)));
        List<dev.kvlab.storage.Outcome> results = List.of(dev.kvlab.storage.Outcome.ABSENT);

        byte[] calls = ReplicaBatch.encodeCalls(ops);
        assertThat(ReplicaBatch.frameCalls(ops)).isEqualTo(frame(java.util.Arrays.copyOf(calls, calls.length + PeerAuthentication.TAG_BYTES)));
        assertThat(io.netty.buffer.ByteBufUtil.getBytes(ReplicaBatch.answerFrame(results)))
                .isEqualTo(frame(io.netty.buffer.ByteBufUtil.getBytes(ReplicaBatch.answers(results))));
    }

    private static byte[] frame(byte[] body) {
        return ByteBuffer.allocate(BatchFrames.LENGTH_BYTES + body.length).putInt(body.length).put(body).array();
    }
}
