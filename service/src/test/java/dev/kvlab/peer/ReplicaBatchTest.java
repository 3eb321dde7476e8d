package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.replication.ReplicaRefusedException;
import dev.kvlab.replication.VersionTooFarAheadException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
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
        List<Outcome> results = List.of(new Outcome.Found(VALUE), Outcome.DONE, Outcome.ABSENT, new Outcome.Found(TOMBSTONE));

        List<Outcome> decoded = decodeAnswers(bytes(ReplicaBatch.answers(results)), ops);

        assertThat(((Outcome.Found) decoded.get(0)).record().encoded()).isEqualTo(VALUE.encoded());
        assertThat(decoded.get(1)).isEqualTo(Outcome.DONE);
        assertThat(decoded.get(2)).isEqualTo(Outcome.ABSENT);
        assertThat(((Outcome.Found) decoded.get(3)).record().isTombstone()).isTrue();
    }

    @Test
    void aRefusedCallFailsAloneWithTheReplicasReasonAndWords() {
        List<StoreOp> ops = List.of(new StoreOp.Write(bytes("ahead"), VALUE), new StoreOp.Read(bytes("r")),
                new StoreOp.Write(bytes("busy"), VALUE), new StoreOp.Write(bytes("broken"), VALUE));
        List<Outcome> results = List.of(
                new Outcome.Failed(new VersionTooFarAheadException(VALUE.version(), 120_000, 60_000)),
                new Outcome.Found(VALUE),
                new Outcome.Failed(new RejectedExecutionException("4096 calls wait")),
                new Outcome.Failed(new IllegalStateException("x".repeat(5000))));

        List<Outcome> decoded = decodeAnswers(bytes(ReplicaBatch.answers(results)), ops);

        assertThat(refusal(decoded.get(0)).reason()).isEqualTo(ReplicaRefusedException.Reason.VERSION_AHEAD);
        assertThat(refusal(decoded.get(0))).hasMessage("replica http://peer refused the call: version " + VALUE.version()
                + " is 120000 ms ahead of this node's clock; at most 60000 ms are tolerated (kvlab.cluster.max-clock-skew)");
        assertThat(decoded.get(1)).isInstanceOf(Outcome.Found.class);
        assertThat(refusal(decoded.get(2)).reason()).isEqualTo(ReplicaRefusedException.Reason.OVERLOADED);
        assertThat(refusal(decoded.get(3)).reason()).isEqualTo(ReplicaRefusedException.Reason.FAILED);
        assertThat(refusal(decoded.get(3)).getMessage()).as("a long message is cut").hasSizeLessThan(1100);
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
        byte[] one = bytes(ReplicaBatch.answers(List.of(Outcome.ABSENT)));
        byte[] three = bytes(ReplicaBatch.answers(List.of(Outcome.ABSENT, Outcome.ABSENT, Outcome.ABSENT)));

        assertThatThrownBy(() -> decodeAnswers(one, reads)).hasMessageContaining("cut short");
        assertThatThrownBy(() -> decodeAnswers(three, reads)).hasMessageContaining("more answers than calls");
        assertThatThrownBy(() -> decodeAnswers(new byte[] {ReplicaBatch.DONE, ReplicaBatch.DONE}, reads))
                .hasMessageContaining("answer 0 of the batch has kind 0, which does not answer its call");
        assertThatThrownBy(() -> decodeAnswers(new byte[] {ReplicaBatch.REFUSED, 9, 0, 0, ReplicaBatch.ABSENT}, reads))
                .hasMessageContaining("corrupt at answer 0: a refusal of unknown reason 9");
    }

    private static List<Outcome> decodeAnswers(byte[] body, List<StoreOp> ops) {
        return ReplicaBatch.decodeAnswers(ByteBuffer.wrap(body), ops, 1 << 20, "http://peer");
    }

    private static ReplicaRefusedException refusal(Outcome outcome) {
        return (ReplicaRefusedException) ((Outcome.Failed) outcome).error();
    }

    private static List<StoreOp> decode(byte[] body, int maxCalls) {
        return ReplicaBatch.decodeCalls(ByteBuffer.wrap(body), maxCalls, 1024, 1 << 20);
    }

    private static byte[] bytes(io.netty.buffer.ByteBuf buffer) {
        return io.netty.buffer.ByteBufUtil.getBytes(buffer);
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
