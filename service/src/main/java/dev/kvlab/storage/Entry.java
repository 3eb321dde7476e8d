package dev.kvlab.storage;

/** A key with the record stored under it, as a range scan yields them. */
public record Entry(byte[] key, Record record) {
}
