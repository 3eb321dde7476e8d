package dev.kvlab.backup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Backups in a directory: a local folder, or a volume that every node mounts. An object is written
 * to a temporary file beside it and renamed into place, so a reader sees it whole or not at all.
 */
public final class DirectoryTarget implements BackupTarget {

    private static final String PARTIAL = ".partial-";
    private final Path root;

    public DirectoryTarget(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    @Override
    public String describe() {
        return root.toString();
    }

    @Override
    public boolean exists(String key) {
        return Files.isRegularFile(path(key));
    }

    @Override
    public void put(String key, Path file, BackupPace pace) throws IOException {
        Path target = path(key);
        Path partial = partial(target);
        try (InputStream in = pace.paced(Files.newInputStream(file))) {
            Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
        }
        publish(partial, target);
    }

    @Override
    public void put(String key, byte[] bytes) throws IOException {
        Path target = path(key);
        Path partial = partial(target);
        Files.write(partial, bytes);
        publish(partial, target);
    }

    @Override
    public InputStream open(String key) throws IOException {
        return Files.newInputStream(path(key));
    }

    @Override
    public List<StoredObject> list(String prefix) throws IOException {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        List<StoredObject> objects = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                String key = root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
                if (key.startsWith(prefix) && !file.getFileName().toString().startsWith(PARTIAL)) {
                    try {
                        objects.add(new StoredObject(key, Files.size(file), Files.getLastModifiedTime(file).toMillis()));
                    } catch (NoSuchFileException gone) {
                        // deleted while listed
                    }
                }
            }
        }
        objects.sort(Comparator.comparing(StoredObject::key));
        return objects;
    }

    @Override
    public void delete(String key) throws IOException {
        Files.deleteIfExists(path(key));
    }

    /** The key's file under the root; a key that would leave the root is refused. */
    private Path path(String key) {
        Path path = root.resolve(key).normalize();
        if (!path.startsWith(root) || path.equals(root)) {
            throw new IllegalArgumentException("not a key of this target: " + key);
        }
        return path;
    }

    private static Path partial(Path target) throws IOException {
        Files.createDirectories(target.getParent());
        return target.resolveSibling(PARTIAL + UUID.randomUUID());
    }

    private static void publish(Path partial, Path target) throws IOException {
        try {
            LocalFiles.publish(partial, target);
        } finally {
            Files.deleteIfExists(partial);
        }
    }
}
