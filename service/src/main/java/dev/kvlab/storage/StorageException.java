package dev.kvlab.storage;

/** RocksDB failed, or returned something that is not a kvlab record. */
public class StorageException extends RuntimeException {

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }

    public StorageException(String message) {
        super(message);
    }
}
