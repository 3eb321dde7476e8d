package dev.kvlab.backup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;

/**
 * Where backups are kept: a directory or an S3-compatible bucket, seen as a flat space of objects
 * named by keys with {@code /} in them ({@link BackupLayout}). An object, once put, is whole:
 * readers never see a part of one. Blocking: callers run it off the event loops.
 */
public interface BackupTarget extends AutoCloseable {

    /** The target as a person reads it: the directory, or {@code s3://bucket/prefix at endpoint}. */
    String describe();

    boolean exists(String key) throws IOException;

    /** Stores the file's bytes under {@code key}, replacing any object there; the file is read at {@code pace}. */
    void put(String key, Path file, BackupPace pace) throws IOException;

    void put(String key, byte[] bytes) throws IOException;

    /** The object's bytes, to be read once and closed; {@link java.nio.file.NoSuchFileException} when there is none. */
    InputStream open(String key) throws IOException;

    default byte[] read(String key) throws IOException {
        try (InputStream in = open(key)) {
            return in.readAllBytes();
        }
    }

    /** Every object whose key starts with {@code prefix}, in key order. */
    List<StoredObject> list(String prefix) throws IOException;

    /** Removes the object; nothing happens when there is none. */
    void delete(String key) throws IOException;

    @Override
    default void close() {
    }

    /** An object in a target: its key, size and when it was last written. */
    record StoredObject(String key, long bytes, long modifiedMillis) {
    }
}
