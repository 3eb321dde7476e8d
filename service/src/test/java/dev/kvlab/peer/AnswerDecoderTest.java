package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.replication.ReplicaRefusedException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class AnswerDecoderTest {

    static final List<StoreOp> OPS = List.of(read("big"), read("small"), write("w"), read("absent"), read("refused"));

    @Test
    void answersCutAnywhereByTheNetworkDecodeTheSame() {
        byte[] answers = answers();
        for (int cut = 1; cut < answers.length; cut++) {
            AnswerDecoder decoder = new AnswerDecoder(OPS, null, 1 << 20, "http://peer");
            decoder.decode(ByteBuffer.wrap(answers, 0, cut), cut);
            assertThat(decoder.complete()).as("cut at %d", cut).isFalse();
            decoder.decode(ByteBuffer.wrap(answers, cut, answers.length - cut), answers.length - cut);

            assertThat(decoder.complete()).as("cut at %d", cut).isTrue();
            List<Outcome> outcomes = decoder.outcomes();
            assertThat(((Outcome.Found) outcomes.get(0)).record().valueLength()).isEqualTo(10_000);
            assertThat(((Outcome.Found) outcomes.get(1)).record().valueBytes()).isEqualTo(bytes("s"));
            assertThat(outcomes.subList(2, 4)).containsExactly(Outcome.DONE, Outcome.ABSENT);
            assertThat(((Outcome.Failed) outcomes.get(4)).error()).isInstanceOf(ReplicaRefusedException.class).hasMessageContaining("busy");
        }
    }

    @Test
    void aRecordItsCallsLeaseHasNoRoomForIsSkippedAndFailsThatCallAlone() {
        MemoryBudget budget = new MemoryBudget(100);
        List<MemoryBudget.Lease> leases = new ArrayList<>(Arrays.asList(budget.lease(), budget.lease(), null, budget.lease(), budget.lease()));
        AnswerDecoder decoder = new AnswerDecoder(OPS, leases, 1 << 20, "http://peer");
        byte[] answers = answers();

        decoder.decode(ByteBuffer.wrap(answers), answers.length);

        assertThat(decoder.complete()).isTrue();
        assertThat(((Outcome.Failed) decoder.outcomes().get(0)).error()).isInstanceOf(OverBudgetException.class);
        assertThat(decoder.outcomes().get(1)).isInstanceOf(Outcome.Found.class);
        assertThat(leases.get(0).held()).as("nothing held for the skipped record").isZero();
        assertThat(leases.get(1).held()).as("the small record's bytes").isEqualTo(Record.HEADER_BYTES + 1);
        assertThat(budget.held()).isEqualTo(Record.HEADER_BYTES + 1);
    }

    private static byte[] answers() {
        return ByteBufUtil.getBytes(ReplicaBatch.answers(List.of(
                new Outcome.Found(value(new byte[10_000])), new Outcome.Found(value(bytes("s"))), Outcome.DONE, Outcome.ABSENT,
                new Outcome.Failed(new java.util.concurrent.RejectedExecutionException("busy")))));
    }

    private static Record value(byte[] value) {
        byte[] array = Record.newValueArray(value.length);
        System.arraycopy(value, 0, array, Record.HEADER_BYTES, value.length);
        return Record.value(new Version(1L << 16, 1), array);
    }

    private static StoreOp read(String key) {
        return new StoreOp.Read(bytes(key));
    }

    private static StoreOp write(String key) {
        return new StoreOp.Write(bytes(key), value(bytes("v")));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
