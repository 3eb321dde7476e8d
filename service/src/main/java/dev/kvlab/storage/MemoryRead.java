package dev.kvlab.storage;

/**
 * What a read from RocksDB's memory found ({@link RocksStore#readFromMemory}): when
 * {@code answered}, {@code record} is the key's record, or {@code null} if it has none; otherwise
 * only a read of the files can tell.
 */
public record MemoryRead(boolean answered, Record record) {

    static final MemoryRead MISS = new MemoryRead(false, null);
    static final MemoryRead ABSENT = new MemoryRead(true, null);
}
