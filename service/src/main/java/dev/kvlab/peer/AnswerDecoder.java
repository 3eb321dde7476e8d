package dev.kvlab.peer;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.ReplicaRefusedException;
import dev.kvlab.storage.Outcome;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes the answers to one batch's calls ({@link ReplicaBatch}) as their bytes arrive, in buffers
 * cut anywhere by the network. A found record is allocated once, at its full size, and only after
 * its call's lease has taken its bytes; a record the lease has no room for is skipped as it arrives
 * and its call fails with {@link dev.kvlab.memory.OverBudgetException}. However large a batch's
 * answer, the coordinator so holds no more of it than its requests' budgets allow.
 */
final class AnswerDecoder {

    private enum Field { KIND, RECORD_LENGTH, RECORD, REASON, MESSAGE_LENGTH, MESSAGE }

    private final List<StoreOp> ops;
    /** The lease of each call, which holds the record it reads; null: no budget (tests, tools). */
    private final List<MemoryBudget.Lease> leases;
    private final long maxRecordLength;
    private final String node;
    private final List<Outcome> outcomes;
    private final byte[] number = new byte[4];
    private Field field = Field.KIND;
    private int numberLength = 1;
    private int numberFilled;
    /** The record or message being filled; null while a record is skipped. */
    private byte[] bytes;
    private int bytesFilled;
    private long bytesLeft;
    private ReplicaRefusedException.Reason reason;

    AnswerDecoder(List<StoreOp> ops, List<MemoryBudget.Lease> leases, long maxValueLength, String node) {
        this.ops = ops;
        this.leases = leases;
        this.maxRecordLength = maxValueLength + Record.MAX_HEADER_BYTES;
        this.node = node;
        this.outcomes = new ArrayList<>(ops.size());
    }

    /**
     * Reads up to {@code max} bytes of answers from {@code buffer}.
     *
     * @throws IllegalStateException when the bytes are not answers to these calls
     */
    void decode(ByteBuffer buffer, int max) {
        int end = buffer.position() + Math.min(max, buffer.remaining());
        while (buffer.position() < end) {
            if (field == Field.RECORD || field == Field.MESSAGE) {
                int count = (int) Math.min(bytesLeft, end - buffer.position());
                if (bytes != null) {
                    buffer.get(bytes, bytesFilled, count);
                    bytesFilled += count;
                } else {
                    buffer.position(buffer.position() + count);
                }
                bytesLeft -= count;
                if (bytesLeft == 0) {
                    finishBytes();
                }
                continue;
            }
            int count = Math.min(numberLength - numberFilled, end - buffer.position());
            buffer.get(number, numberFilled, count);
            numberFilled += count;
            if (numberFilled == numberLength) {
                numberFilled = 0;
                finishNumber();
            }
        }
    }

    /** Whether every call has its answer and no answer is cut short. */
    boolean complete() {
        return outcomes.size() == ops.size() && field == Field.KIND;
    }

    List<Outcome> outcomes() {
        return outcomes;
    }

    private void finishNumber() {
        switch (field) {
            case KIND -> kind(number[0]);
            case RECORD_LENGTH -> {
                int length = ByteBuffer.wrap(number).getInt();
                if (length < Record.HEADER_BYTES || length > maxRecordLength) {
                    throw corrupt("a record of " + length + " bytes (allowed " + Record.HEADER_BYTES + " to " + maxRecordLength + ")");
                }
                MemoryBudget.Lease lease = leases == null ? null : leases.get(outcomes.size());
                bytes = lease == null || lease.tryHold(length) ? new byte[length] : null;
                expectBytes(Field.RECORD, length);
            }
            case REASON -> {
                int value = number[0];
                ReplicaRefusedException.Reason[] reasons = ReplicaRefusedException.Reason.values();
                if (value < 0 || value >= reasons.length) {
                    throw corrupt("a refusal of unknown reason " + value);
                }
                reason = reasons[value];
                expectNumber(Field.MESSAGE_LENGTH, 2);
            }
            case MESSAGE_LENGTH -> {
                int length = Short.toUnsignedInt(ByteBuffer.wrap(number, 0, 2).getShort());
                if (length > ReplicaBatch.MAX_MESSAGE_BYTES) {
                    throw corrupt("a refusal message of " + length + " bytes");
                }
                bytes = new byte[length];
                if (length == 0) {
                    finishBytes();
                } else {
                    expectBytes(Field.MESSAGE, length);
                }
            }
            default -> throw new IllegalStateException("not a number: " + field);
        }
    }

    private void kind(byte kind) {
        if (outcomes.size() == ops.size()) {
            throw new IllegalStateException("the batch's answer has more answers than calls");
        }
        boolean write = ops.get(outcomes.size()) instanceof StoreOp.Write;
        switch (kind) {
            case ReplicaBatch.DONE -> answered(write, kind, Outcome.DONE);
            case ReplicaBatch.ABSENT -> answered(!write, kind, Outcome.ABSENT);
            case ReplicaBatch.FOUND -> {
                answered(!write, kind, null);
                expectNumber(Field.RECORD_LENGTH, 4);
            }
            case ReplicaBatch.REFUSED -> expectNumber(Field.REASON, 1);
            default -> throw new IllegalStateException("answer " + outcomes.size() + " of the batch has unknown kind " + kind);
        }
    }

    /** Checks that the answer's kind answers its call; adds the outcome, unless it is still to come. */
    private void answered(boolean fits, byte kind, Outcome outcome) {
        if (!fits) {
            throw new IllegalStateException("answer " + outcomes.size() + " of the batch has kind " + kind + ", which does not answer its call");
        }
        if (outcome != null) {
            outcomes.add(outcome);
        }
    }

    private void finishBytes() {
        if (field == Field.RECORD) {
            outcomes.add(bytes == null ? new Outcome.Failed(leases.get(outcomes.size()).overBudget()) : found(bytes));
        } else {
            outcomes.add(new Outcome.Failed(new ReplicaRefusedException(node, reason, new String(bytes, StandardCharsets.UTF_8))));
        }
        bytes = null;
        expectNumber(Field.KIND, 1);
    }

    private Outcome found(byte[] record) {
        try {
            return new Outcome.Found(Record.decode(record));
        } catch (IllegalArgumentException e) {
            throw corrupt(e.getMessage());
        }
    }

    private void expectNumber(Field next, int length) {
        field = next;
        numberLength = length;
        numberFilled = 0;
    }

    private void expectBytes(Field next, long length) {
        field = next;
        bytesFilled = 0;
        bytesLeft = length;
    }

    private IllegalStateException corrupt(String what) {
        return new IllegalStateException("the batch's answer is corrupt at answer " + outcomes.size() + ": " + what);
    }
}
