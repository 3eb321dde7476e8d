package dev.kvlab.backup;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/** The file operations of backups and restores on a node's own disk. */
final class LocalFiles {

    private LocalFiles() {
    }

    /** Removes {@code root} and everything under it; nothing when it does not exist. */
    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        }
    }

    /**
     * Renames a file written whole into its place, replacing what is there, atomically where the
     * file system can: a reader sees the old file or the new one, never a part.
     */
    static void publish(Path written, Path target) throws IOException {
        try {
            Files.move(written, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(written, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
