package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

/** What {@code kvlab.backup.target} may say, and the reason when it cannot be obeyed. */
class BackupTargetsTest {

    @TempDir
    Path dir;

    private static BackupProperties properties(String target, BackupProperties.S3 s3) {
        return new BackupProperties(target, s3, 7, Duration.ZERO, Duration.ofHours(1), DataSize.ofBytes(0));
    }

    private static BackupProperties.S3 keys(String access, String accessFile, String secret, String secretFile) {
        return new BackupProperties.S3("http://127.0.0.1:1", "us-east-1", true, access, accessFile, secret, secretFile);
    }

    @Test
    void aPathIsADirectoryAndS3IsABucket() {
        try (BackupTarget target = BackupTargets.open(properties(dir.toString(), keys("", "", "", "")))) {
            assertThat(target).isInstanceOf(DirectoryTarget.class);
            assertThat(target.describe()).isEqualTo(dir.toAbsolutePath().toString());
        }
        try (BackupTarget target = BackupTargets.open(properties("s3://my-bucket/some/prefix/", keys("a", "", "b", "")))) {
            assertThat(target).isInstanceOf(S3Target.class);
            assertThat(target.describe()).isEqualTo("s3://my-bucket/some/prefix at http://127.0.0.1:1");
        }
    }

    @Test
    void badTargetsAreRefusedWithTheReason() {
        BackupProperties.S3 keys = keys("a", "", "b", "");
        assertThatThrownBy(() -> BackupTargets.open(properties(" ", keys))).hasMessageContaining("no backup target");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://", keys))).hasMessageContaining("names no bucket");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3:///prefix", keys))).hasMessageContaining("names no bucket");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://Not_A_Bucket", keys))).hasMessageContaining("not a bucket's name");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket/a/../b", keys))).hasMessageContaining("'..'");
        assertThatThrownBy(() -> BackupTargets.open(properties("gs://bucket", keys))).hasMessageContaining("not in gs://");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket",
                new BackupProperties.S3("ftp://host", "us-east-1", true, "a", "", "b", "")))).hasMessageContaining("http(s)://");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket",
                new BackupProperties.S3("http://host:1", " ", true, "a", "", "b", "")))).hasMessageContaining("region is empty");
    }

    @Test
    void s3NeedsItsKeysOnceEach() throws Exception {
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket", keys("", "", "", ""))))
                .hasMessageContaining("access key").hasMessageContaining("kvlab.backup.s3.access-key");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket", keys("a", "", "", ""))))
                .hasMessageContaining("secret key").hasMessageContaining("KVLAB_BACKUP_S3_SECRETKEY");
        Path file = Files.writeString(dir.resolve("key"), "x");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket", keys("a", file.toString(), "b", ""))))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket", keys("", dir.resolve("none").toString(), "b", ""))))
                .hasMessageContaining("cannot read the S3 access key");
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        assertThatThrownBy(() -> BackupTargets.open(properties("s3://bucket", keys("a", "", "", empty.toString()))))
                .hasMessageContaining("is empty");
    }
}
