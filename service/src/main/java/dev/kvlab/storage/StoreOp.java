package dev.kvlab.storage;

/** One call of a batch that {@link LocalStore#batch} runs in a single storage task. */
public sealed interface StoreOp permits StoreOp.Read, StoreOp.Write {

    byte[] key();

    /** Reads the key's record, a tombstone included. */
    record Read(byte[] key) implements StoreOp {
    }

    /** Stores the record unless a newer version is there ({@link RocksStore#write}). */
    record Write(byte[] key, Record record) implements StoreOp {
    }
}
