package dev.kvlab.storage;

/** A call on a store that is closed (the node is stopping): not a failure of the store. */
public class StoreClosedException extends StorageException {

    public StoreClosedException() {
        super("the store is closed");
    }
}
