package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Manifests read back as written, and refused when they do not hold what a backup needs. */
class ManifestsTest {

    private static final String SHA_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    @TempDir
    Path dir;

    static NodeManifest node(String backup, List<FileEntry> files) {
        return new NodeManifest(NodeManifest.FORMAT, backup, 1, "http://b:8080", List.of("http://a:8080", "http://b:8080"), 1000, 1100, 50,
                "test", 10, 2, "1000.1", "1099.2", 3, 3, files);
    }

    @Test
    void aNodeManifestReadsBackAsWritten() {
        NodeManifest written = node("kvlab-20260101-000000", List.of(new FileEntry("000012.sst", 3, SHA_ABC), new FileEntry("CURRENT", 16, SHA_ABC)));

        NodeManifest read = Manifests.read(Manifests.write(written), NodeManifest.class, "nodes/1.json");

        assertThat(read).isEqualTo(written);
    }

    @Test
    void aClusterManifestReadsBackAsWritten() {
        ClusterManifest written = new ClusterManifest(NodeManifest.FORMAT, "nightly.1", 1000, 2000, "test", "every write",
                List.of("http://a:8080"), List.of(new ClusterManifest.Part(0, "http://a:8080", 10, 3, 3, 1, 50)));

        assertThat(Manifests.read(Manifests.write(written), ClusterManifest.class, "backup.json")).isEqualTo(written);
    }

    @Test
    void aFileWhoseChecksumIsNotASha256IsRefused() {
        String json = new String(Manifests.write(node("b1", List.of(new FileEntry("000012.sst", 3, SHA_ABC)))), StandardCharsets.UTF_8);
        byte[] wrong = json.replace(SHA_ABC, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a").getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> Manifests.read(wrong, NodeManifest.class, "nodes/1.json"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nodes/1.json").hasMessageContaining("SHA-256");
    }

    @Test
    void aFieldKvlabDoesNotKnowAndAManifestOfAnotherShapeAreRefused() {
        String json = new String(Manifests.write(node("b1", List.of())), StandardCharsets.UTF_8);
        byte[] extra = json.replaceFirst("\\{", "{\"surprise\": 1,").getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> Manifests.read(extra, NodeManifest.class, "nodes/1.json")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Manifests.read("[]".getBytes(), NodeManifest.class, "nodes/1.json")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void namesThatCouldLeaveTheirPlaceAreRefused() {
        for (String name : List.of("", "../x", "a/b", ".hidden", "-dash", "a b", "x".repeat(129))) {
            assertThatThrownBy(() -> BackupLayout.checkedName(name)).as(name).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(BackupLayout.clusterManifest("kvlab-20260101-000000")).isEqualTo("backups/kvlab-20260101-000000/backup.json");
        for (String file : List.of("../000012.sst", "a/b", ".x", "")) {
            assertThatThrownBy(() -> new FileEntry(file, 1, SHA_ABC)).as(file).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> BackupLayout.blob("../../etc/passwd")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void checksumsAreTheSha256OfTheBytes() throws IOException {
        Path file = Files.writeString(dir.resolve("CURRENT"), "abc");

        assertThat(FileDigests.sha256(file)).isEqualTo(SHA_ABC);
        assertThat(FileDigests.sha256("abc".getBytes(StandardCharsets.UTF_8))).isEqualTo(SHA_ABC);
    }

    @Test
    void aTableFileIsReadOnceButAFileThatChangesUnderItsNameIsReadEveryTime() throws IOException {
        FileDigests digests = new FileDigests(BackupPace.unlimited());
        Path table = Files.writeString(dir.resolve("000012.sst"), "abc");
        Path current = Files.writeString(dir.resolve("CURRENT"), "abc");
        assertThat(digests.of(table, 3)).isEqualTo(SHA_ABC);
        assertThat(digests.of(current, 3)).isEqualTo(SHA_ABC);

        // Same names, same sizes, other bytes: a table file never changes, CURRENT does.
        Files.writeString(table, "xyz");
        Files.writeString(current, "xyz");

        assertThat(digests.of(table, 3)).isEqualTo(SHA_ABC);
        assertThat(digests.of(current, 3)).isEqualTo(FileDigests.sha256(current));
        digests.retainOnly(java.util.Set.of());
        assertThat(digests.remembered()).isZero();
    }
}
