package dev.kvlab.backup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;

/**
 * The SHA-256 of a snapshot's files. RocksDB's table files ({@code .sst}, {@code .blob}) never change
 * once written and their names are never reused by the store, so their digests are remembered by
 * name and size and a file is read once, not at every backup; the other files (CURRENT, MANIFEST,
 * OPTIONS, a WAL) are small and are read every time. Only the files of the last snapshot are
 * remembered. Files are read at the backup's pace. Not thread-safe: one backup thread uses it.
 */
public final class FileDigests {

    private static final int BUFFER_BYTES = 256 * 1024;
    private final BackupPace pace;
    private Map<String, String> immutable = new HashMap<>();

    public FileDigests(BackupPace pace) {
        this.pace = pace;
    }

    /** The hex SHA-256 of {@code file}'s content, read as fast as the disk allows. */
    public static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return sha256(in);
        }
    }

    private static String sha256(InputStream in) throws IOException {
        MessageDigest digest = newDigest();
        byte[] buffer = new byte[BUFFER_BYTES];
        for (int read; (read = in.read(buffer)) >= 0; ) {
            digest.update(buffer, 0, read);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** The hex SHA-256 of {@code file}'s content, read at the pace. */
    private String pacedSha256(Path file) throws IOException {
        try (InputStream in = pace.paced(Files.newInputStream(file))) {
            return sha256(in);
        }
    }

    /** The hex SHA-256 of {@code bytes}. */
    public static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(newDigest().digest(bytes));
    }

    /** The digest of {@code file} of {@code bytes}, from memory when it is an immutable file seen before. */
    public String of(Path file, long bytes) throws IOException {
        String name = file.getFileName().toString();
        if (!isImmutable(name)) {
            return pacedSha256(file);
        }
        String key = name + "/" + bytes;
        String known = immutable.get(key);
        if (known == null) {
            known = pacedSha256(file);
            immutable.put(key, known);
        }
        return known;
    }

    /** Forgets every file but those of the last snapshot (given as name/size keys of {@link #of}). */
    public void retainOnly(Set<String> namesAndSizes) {
        Map<String, String> kept = new HashMap<>();
        namesAndSizes.forEach(key -> {
            String digest = immutable.get(key);
            if (digest != null) {
                kept.put(key, digest);
            }
        });
        immutable = kept;
    }

    /** Digests known without reading their files; for tests. */
    int remembered() {
        return immutable.size();
    }

    static boolean isImmutable(String name) {
        return name.endsWith(".sst") || name.endsWith(".blob");
    }

    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }
}
