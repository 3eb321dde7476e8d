package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.storage.RocksStore;
import dev.kvlab.storage.TestStores;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

/** {@link S3Target} against a real S3-compatible server (SeaweedFS), as backups use it. */
class S3TargetTest {

    @TempDir
    static Path serverDir;
    @TempDir
    Path dir;

    private static S3Server server;

    @BeforeAll
    static void startServer() throws Exception {
        server = S3Server.start(serverDir);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** A target under a prefix of its own, so the tests do not see each other's objects. */
    private static BackupProperties properties(String prefix, String accessKey, String secretKey) {
        return new BackupProperties("s3://" + S3Server.BUCKET + "/" + prefix, server.settings(accessKey, secretKey), 7,
                java.time.Duration.ZERO, java.time.Duration.ofHours(1), DataSize.ofBytes(0));
    }

    private static BackupTarget open(String prefix) {
        return BackupTargets.open(properties(prefix, S3Server.ACCESS_KEY, S3Server.SECRET_KEY));
    }

    @Test
    void storesReadsListsAndDeletesObjects() throws IOException {
        String prefix = "t-" + UUID.randomUUID();
        try (BackupTarget target = open(prefix); BackupTarget other = open(prefix + "-other")) {
            assertThat(target.describe()).isEqualTo("s3://kvlab/" + prefix + " at " + server.endpoint);
            Path file = dir.resolve("file");
            Files.writeString(file, "a file's bytes");
            target.put("blobs/b", file, BackupPace.unlimited());
            target.put("blobs/a", "some bytes".getBytes(StandardCharsets.UTF_8));
            target.put("backups/x/backup.json", "{}".getBytes(StandardCharsets.UTF_8));
            other.put("blobs/c", new byte[3]);

            assertThat(target.exists("blobs/a")).isTrue();
            assertThat(target.exists("blobs/none")).isFalse();
            assertThat(new String(target.read("blobs/b"), StandardCharsets.UTF_8)).isEqualTo("a file's bytes");
            assertThat(target.list("blobs/")).extracting(BackupTarget.StoredObject::key, BackupTarget.StoredObject::bytes)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("blobs/a", 10L),
                            org.assertj.core.groups.Tuple.tuple("blobs/b", 14L));
            assertThat(target.list("")).hasSize(3);
            assertThat(target.list("blobs/").getFirst().modifiedMillis())
                    .isBetween(System.currentTimeMillis() - 600_000, System.currentTimeMillis() + 600_000);

            target.delete("blobs/a");
            target.delete("blobs/never-there");
            assertThat(target.exists("blobs/a")).isFalse();
            assertThat(target.list("blobs/")).extracting(BackupTarget.StoredObject::key).containsExactly("blobs/b");
            assertThat(other.list("")).extracting(BackupTarget.StoredObject::key).containsExactly("blobs/c");
        }
    }

    @Test
    void aMissingObjectIsNoSuchFile() {
        try (BackupTarget target = open("t-" + UUID.randomUUID())) {
            assertThatThrownBy(() -> target.open("blobs/none")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> target.read("backups/none/backup.json")).isInstanceOf(NoSuchFileException.class);
        }
    }

    @Test
    void listsEveryPageOfAListing() throws IOException {
        String prefix = "t-" + UUID.randomUUID();
        try (S3Target target = new S3Target(S3Target.client(server.settings(S3Server.ACCESS_KEY, S3Server.SECRET_KEY),
                S3Server.ACCESS_KEY, S3Server.SECRET_KEY, S3Target.TIMEOUTS), S3Server.BUCKET, prefix, "test", S3Target.MULTIPART_THRESHOLD,
                S3Target.PART_BYTES, 2)) {
            for (int i = 0; i < 7; i++) {
                target.put("k/" + i, new byte[i]);
            }
            assertThat(target.list("k/")).extracting(BackupTarget.StoredObject::key)
                    .containsExactly("k/0", "k/1", "k/2", "k/3", "k/4", "k/5", "k/6");
        }
    }

    @Test
    void uploadsABigFileInPartsThatReadBackWhole() throws IOException {
        String prefix = "t-" + UUID.randomUUID();
        long part = 5L * 1024 * 1024; // S3's smallest part
        byte[] bytes = new byte[(int) (2 * part + 12345)];
        new Random(7).nextBytes(bytes);
        Path file = dir.resolve("big");
        Files.write(file, bytes);
        var client = S3Target.client(server.settings(S3Server.ACCESS_KEY, S3Server.SECRET_KEY), S3Server.ACCESS_KEY,
                S3Server.SECRET_KEY, S3Target.TIMEOUTS);
        java.util.concurrent.atomic.AtomicLong waited = new java.util.concurrent.atomic.AtomicLong();
        BackupPace pace = new BackupPace(part, System::nanoTime, waited::addAndGet); // waits counted, not slept
        try (S3Target target = new S3Target(client, S3Server.BUCKET, prefix, "test", part, part, 1000)) {
            target.put("blobs/big", file, pace);
            assertThat(waited.get()).as("the parts were read at the pace").isGreaterThan(0);
            assertThat(target.read("blobs/big")).isEqualTo(bytes);
            assertThat(target.list("blobs/")).extracting(BackupTarget.StoredObject::bytes).containsExactly((long) bytes.length);
            // A multipart upload's ETag ends with its number of parts.
            assertThat(client.headObject(request -> request.bucket(S3Server.BUCKET).key(prefix + "/blobs/big")).eTag())
                    .endsWith("-3\"");
        }
    }

    @Test
    void requestsAreSignedWithTheRightKeysOrRefused() {
        try (BackupTarget target = BackupTargets.open(properties("t-" + UUID.randomUUID(), S3Server.ACCESS_KEY, "not-the-secret"))) {
            assertThatThrownBy(() -> target.put("blobs/a", new byte[1])).isInstanceOf(IOException.class)
                    .hasMessageContaining("blobs/a");
            assertThatThrownBy(() -> target.list("")).isInstanceOf(IOException.class);
        }
    }

    @Test
    void aBucketThatDoesNotExistIsNamed() {
        BackupProperties properties = new BackupProperties("s3://no-such-bucket-here",
                server.settings(S3Server.ACCESS_KEY, S3Server.SECRET_KEY), 7, java.time.Duration.ZERO, java.time.Duration.ofHours(1), DataSize.ofBytes(0));
        try (BackupTarget target = BackupTargets.open(properties)) {
            assertThatThrownBy(() -> target.put("blobs/a", new byte[1])).isInstanceOf(IOException.class)
                    .hasMessageContaining("no-such-bucket-here");
        }
    }

    @Test
    void keysAreReadFromTheirFilesAtEachOpening() throws IOException {
        Path access = dir.resolve("access");
        Path secret = dir.resolve("secret");
        Files.writeString(access, S3Server.ACCESS_KEY + "\n");
        Files.writeString(secret, "an-old-secret\n");
        String prefix = "t-" + UUID.randomUUID();
        BackupProperties properties = new BackupProperties("s3://" + S3Server.BUCKET + "/" + prefix,
                new BackupProperties.S3(server.endpoint, "us-east-1", true, "", access.toString(), "", secret.toString()),
                7, java.time.Duration.ZERO, java.time.Duration.ofHours(1), DataSize.ofBytes(0));
        try (BackupTarget target = BackupTargets.open(properties)) {
            assertThatThrownBy(() -> target.list("")).isInstanceOf(IOException.class);
        }
        Files.writeString(secret, S3Server.SECRET_KEY + "\n");
        try (BackupTarget target = BackupTargets.open(properties)) {
            target.put("a", new byte[1]);
            assertThat(target.list("")).extracting(BackupTarget.StoredObject::key).containsExactly("a");
        }
    }

    @Test
    void aBackupInTheBucketIsRestoredByTheCommandWithTheSettingsFromTheEnvironment() throws Exception {
        String prefix = "t-" + UUID.randomUUID();
        try (BackupTarget target = open(prefix)) {
            new HandMadeBackups(target, dir.resolve("work")).complete("b1", 1_000, List.of(
                    HandMadeBackups.records("a", TestStores.value(1, "from s3"))));
        }
        Path data = dir.resolve("n0");
        Map<String, String> env = Map.of("KVLAB_BACKUP_TARGET", "s3://" + S3Server.BUCKET + "/" + prefix,
                "KVLAB_BACKUP_S3_ENDPOINT", server.endpoint, "KVLAB_BACKUP_S3_REGION", "us-east-1",
                "KVLAB_BACKUP_S3_PATHSTYLE", "true", "KVLAB_BACKUP_S3_ACCESSKEY", S3Server.ACCESS_KEY,
                "KVLAB_BACKUP_S3_SECRETKEY", S3Server.SECRET_KEY);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = RestoreCommand.run(List.of("--backup=latest", "--data=" + data, "--nodes=1", "--index=0"), env,
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isEqualTo(0);
        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            assertThat(TestStores.text(store.get(TestStores.bytes("a")))).isEqualTo("from s3");
        }
    }

    @Test
    void aDirectoryIsAnythingElse() {
        BackupProperties properties = new BackupProperties(dir.toString(), server.settings("", ""), 7,
                java.time.Duration.ZERO, java.time.Duration.ofHours(1), DataSize.ofBytes(0));
        try (BackupTarget target = BackupTargets.open(properties)) {
            assertThat(target).isInstanceOf(DirectoryTarget.class);
        }
    }
}
