package dev.kvlab.peer;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The call frames of one batch stream as a replica reads them: each held on the node's memory
 * budget from the moment its length is known (a frame the budget has no room for ends the stream,
 * 503 when nothing was answered yet), and its MAC checked ({@link PeerAuthentication.FrameMacs})
 * before its calls are used: a frame injected, replayed or reordered ends the stream (401 when
 * nothing was answered yet) and nothing of it is stored. {@link #decode} runs on one thread at a
 * time (the connection's); a frame's lease is given back with {@link #done}, and every lease still
 * held with {@link #releaseAll} when the stream ends, however it ends.
 */
final class SignedFrames {

    /** A frame's calls, and the lease that holds its bytes (and may hold the records its calls read). */
    record Frame(ByteBuffer calls, MemoryBudget.Lease lease) {
    }

    private final PeerAuthentication.FrameMacs macs;
    private final BatchFrames.Decoder decoder;
    /** Leases of the frames being read, in order. */
    private final Queue<MemoryBudget.Lease> reading = new ConcurrentLinkedQueue<>();
    /** Leases of frames handed on and not done yet; done on the storage's threads. */
    private final Queue<MemoryBudget.Lease> handedOn = new ConcurrentLinkedQueue<>();
    private long frames;

    SignedFrames(long maxFrameBytes, MemoryBudget budget, PeerAuthentication.FrameMacs macs) {
        this.macs = macs;
        this.decoder = new BatchFrames.Decoder(maxFrameBytes, size -> {
            MemoryBudget.Lease lease = budget.lease();
            if (!lease.tryHold(size)) {
                lease.release();
                throw new OverBudgetException(budget.limit());
            }
            reading.add(lease);
        });
    }

    /**
     * The frames this buffer completes, in order, each with its MAC checked.
     *
     * @throws PeerAuthentication.Refused for a frame without its MAC
     * @throws OverBudgetException        for a frame the budget has no room for
     * @throws IllegalArgumentException   for a frame over the maximum
     */
    List<Frame> decode(ByteBuffer buffer) {
        List<byte[]> bodies = decoder.decode(buffer);
        List<Frame> decoded = new ArrayList<>(bodies.size());
        for (byte[] body : bodies) {
            MemoryBudget.Lease lease = reading.poll();
            handedOn.add(lease);
            if (!macs.verify(body)) {
                throw PeerAuthentication.Refused.unauthorized("frame " + frames + " of the batch stream does not carry its MAC: "
                        + "injected, replayed or reordered; the stream ends");
            }
            frames++;
            decoded.add(new Frame(ByteBuffer.wrap(body, 0, body.length - PeerAuthentication.TAG_BYTES), lease));
        }
        return decoded;
    }

    /** The frame is answered: its bytes go back to the budget. */
    void done(Frame frame) {
        handedOn.remove(frame.lease());
        frame.lease().release();
    }

    /** The stream ended: every lease still held goes back. */
    void releaseAll() {
        for (MemoryBudget.Lease lease = handedOn.poll(); lease != null; lease = handedOn.poll()) {
            lease.release();
        }
        for (MemoryBudget.Lease lease = reading.poll(); lease != null; lease = reading.poll()) {
            lease.release();
        }
    }
}
