package dev.kvlab.storage;

/** The disk under the node's store is full: RocksDB refuses writes until space returns (507). */
public class StorageFullException extends StorageException {

    public StorageFullException(String message, Throwable cause) {
        super(message, cause);
    }
}
