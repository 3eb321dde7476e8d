package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReplicaBatchTest {

    private static final Record VALUE = Record.value(new Version(1_700_000_000_000L, 7), valueArray("hello"));
    private static final Record TOMBSTONE = Record.tombstone(new Version(1_700_000_000_001L, 2));

    @Test
    void callsTravelInOrderWithTheirRecords() {
        List<StoreOp> ops = List.of(new StoreOp.Read(bytes("a")), new StoreOp.Write(bytes("b"), VALUE),
                new StoreOp.Write(bytes("c"), TOMBSTONE), new StoreOp.Read(new byte[] {0, (byte) 0xff}));

        List<StoreOp> decoded = ReplicaBatch.decodeCalls(ByteBuffer.wrap(ReplicaBatch.encodeCalls(ops)), 64, 1024, 1 << 20);

        assertThat(decoded).hasSize(4);
        assertThat(decoded.get(0)).isInstanceOf(StoreOp.Read.class);
        assertThat(decoded.get(3).key()).containsExactly(0, 0xff);
        StoreOp.Write value = (StoreOp.Write) decoded.get(1);
        assertThat(value.key()).isEqualTo(bytes("b"));
        assertThat(value.record().encoded()).isEqualTo(VALUE.encoded());
        assertThat(((StoreOp.Write) decoded.get(2)).record().isTombstone()).isTrue();
    }

    @Test
    void answersTravelInCallOrder() {
        List<StoreOp> ops = List.of(new StoreOp.Read(bytes("found")), new StoreOp.Write(bytes("w"), VALUE),
                new StoreOp.Read(bytes("absent")), new StoreOp.Read(bytes("deleted")));
        List<Optional<Record>> results = List.of(Optional.of(VALUE), Optional.empty(), Optional.empty(), Optional.of(TOMBSTONE));

        List<Optional<Record>> decoded = ReplicaBatch.decodeAnswers(ByteBuffer.wrap(ReplicaBatch.encodeAnswers(ops, results)), ops, 1 << 20);

        assertThat(decoded.get(0)).hasValueSatisfying(record -> assertThat(record.encoded()).isEqualTo(VALUE.encoded()));
        assertThat(decoded.get(1)).isEmpty();
        assertThat(decoded.get(2)).isEmpty();
        assertThat(decoded.get(3)).hasValueSatisfying(record -> assertThat(record.isTombstone()).isTrue());
    }

    @Test
    void aBodyThatIsNotABatchWithinTheLimitsIsRefusedWithWhy() {
        byte[] twoReads = ReplicaBatch.encodeCalls(List.of(new StoreOp.Read(bytes("a")), new StoreOp.Read(bytes("b"))));

        assertThatThrownBy(() -> decode(new byte[0], 64)).hasMessage("the batch has no calls");
        assertThatThrownBy(() -> decode(twoReads, 1)).hasMessage("a batch holds at most 1 calls");
        assertThatThrownBy(() -> decode(Arrays.copyOf(twoReads, twoReads.length - 1), 64)).hasMessage("the batch ends inside call 1");
        assertThatThrownBy(() -> decode(new byte[] {9, 0, 0, 0, 1, 'k'}, 64)).hasMessage("call 0 of the batch has unknown kind 9");
        assertThatThrownBy(() -> decode(new byte[] {ReplicaBatch.READ, 0, 0, 0, 0}, 64)).hasMessageContaining("a key of 0 bytes");
        assertThatThrownBy(() -> decode(new byte[] {ReplicaBatch.READ, 0x7f, 0, 0, 0}, 64)).hasMessageContaining("a key of 2130706432 bytes");
        assertThatThrownBy(() -> decode(new byte[] {ReplicaBatch.WRITE, 0, 0, 0, 1, 'k', 0, 0, 0, 2, 0, 0}, 64))
                .hasMessageContaining("a record of 2 bytes");
        assertThatThrownBy(() -> ReplicaBatch.decodeCalls(ByteBuffer.wrap(ReplicaBatch.encodeCalls(List.of(new StoreOp.Write(bytes("k"), VALUE)))), 64, 1024, 2))
                .as("a value over the limit").hasMessageContaining("a record of 18 bytes");
    }

    @Test
    void anAnswerThatDoesNotMatchTheCallsIsAnError() {
        List<StoreOp> reads = List.of(new StoreOp.Read(bytes("a")), new StoreOp.Read(bytes("b")));
        byte[] one = ReplicaBatch.encodeAnswers(reads.subList(0, 1), List.of(Optional.empty()));
        byte[] three = ReplicaBatch.encodeAnswers(List.of(reads.get(0), reads.get(0), reads.get(0)), List.of(Optional.empty(), Optional.empty(), Optional.empty()));

        assertThatThrownBy(() -> ReplicaBatch.decodeAnswers(ByteBuffer.wrap(one), reads, 1 << 20)).hasMessageContaining("cut short");
        assertThatThrownBy(() -> ReplicaBatch.decodeAnswers(ByteBuffer.wrap(three), reads, 1 << 20)).hasMessageContaining("more answers than calls");
        assertThatThrownBy(() -> ReplicaBatch.decodeAnswers(ByteBuffer.wrap(new byte[] {ReplicaBatch.DONE, ReplicaBatch.DONE}), reads, 1 << 20))
                .hasMessageContaining("answer 0 of the batch has kind 0 for a read");
    }

    private static List<StoreOp> decode(byte[] body, int maxCalls) {
        return ReplicaBatch.decodeCalls(ByteBuffer.wrap(body), maxCalls, 1024, 1 << 20);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] valueArray(String value) {
        byte[] array = Record.newValueArray(value.length());
        System.arraycopy(bytes(value), 0, array, Record.HEADER_BYTES, value.length());
        return array;
    }
}
