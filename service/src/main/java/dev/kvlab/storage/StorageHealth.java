package dev.kvlab.storage;

import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the node's store takes writes, and if not, since when and why: a full disk, or another
 * failure RocksDB reported. Reads go on either way. A failed write marks it; a write that succeeds
 * again (RocksDB resumes by itself once space returns) clears it. Readiness shows it.
 */
public final class StorageHealth {

    private static final Logger log = LoggerFactory.getLogger(StorageHealth.class);

    /** The store's state: {@code problem} null while it takes writes. */
    public record State(String problem, boolean diskFull, Instant since) {

        static final State WRITABLE = new State(null, false, null);

        public boolean writable() {
            return problem == null;
        }
    }

    private volatile State state = State.WRITABLE;

    public State state() {
        return state;
    }

    void writeFailed(StorageException failure) {
        boolean diskFull = failure instanceof StorageFullException;
        State before = state;
        if (before.writable() || before.diskFull() != diskFull) {
            state = new State(failure.getMessage(), diskFull, Instant.now());
            log.error("the store refuses writes: {}", failure.getMessage());
        }
    }

    void writeSucceeded() {
        State before = state;
        if (!before.writable()) {
            state = State.WRITABLE;
            log.warn("the store takes writes again, after refusing them since {} ({})", before.since(), before.problem());
        }
    }
}
