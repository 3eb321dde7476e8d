package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Objects in a directory: whole or absent, listed by prefix, never outside the directory. */
class DirectoryTargetTest {

    @TempDir
    Path dir;

    @Test
    void anObjectIsPutWholeAndReplacedWhole() throws IOException {
        DirectoryTarget target = new DirectoryTarget(dir.resolve("backups"));
        Path source = Files.writeString(dir.resolve("source"), "first");

        target.put("blobs/aa", source, BackupPace.unlimited());
        target.put("blobs/aa", "second".getBytes());

        assertThat(target.exists("blobs/aa")).isTrue();
        assertThat(new String(target.read("blobs/aa"))).isEqualTo("second");
        try (Stream<Path> files = Files.list(dir.resolve("backups/blobs"))) {
            assertThat(files.map(path -> path.getFileName().toString())).as("no temporary file left").containsExactly("aa");
        }
    }

    @Test
    void listingIsByPrefixInKeyOrderAndSkipsPartialObjects() throws IOException {
        DirectoryTarget target = new DirectoryTarget(dir);
        target.put("backups/b/nodes/1.json", new byte[2]);
        target.put("backups/a/backup.json", new byte[3]);
        target.put("blobs/cc", new byte[1]);
        Files.writeString(dir.resolve("blobs/.partial-1234"), "being written");

        assertThat(target.list("backups/")).extracting(BackupTarget.StoredObject::key)
                .containsExactly("backups/a/backup.json", "backups/b/nodes/1.json");
        assertThat(target.list("blobs/")).extracting(BackupTarget.StoredObject::key, BackupTarget.StoredObject::bytes)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("blobs/cc", 1L));
        assertThat(new DirectoryTarget(dir.resolve("none")).list("")).isEmpty();
    }

    @Test
    void aKeyThatEscapesTheRootIsRefused() throws IOException {
        DirectoryTarget target = new DirectoryTarget(dir.resolve("backups"));

        for (String key : new String[] {"../outside", "blobs/../../outside", "/etc/passwd", ""}) {
            assertThatThrownBy(() -> target.put(key, new byte[1])).as(key).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> target.delete(key)).as(key).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(dir.resolve("outside")).doesNotExist();
    }

    @Test
    void aMissingObjectIsNoSuchFileAndDeletingItIsNothing() throws IOException {
        DirectoryTarget target = new DirectoryTarget(dir);

        assertThat(target.exists("blobs/none")).isFalse();
        assertThatThrownBy(() -> target.read("blobs/none")).isInstanceOf(NoSuchFileException.class);
        target.delete("blobs/none");
    }
}
