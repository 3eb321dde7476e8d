package dev.kvlab.backup;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.backup.*}: where the cluster's backups go and how long they are kept.
 *
 * @param target   a directory (every node must see the same one), or {@code s3://bucket[/prefix]}
 *                 for an S3-compatible store; empty: this node takes no backups
 * @param s3       how to reach the S3-compatible store
 * @param keepLast complete backups kept at the most, the newest; 0 keeps them all
 * @param maxAge   complete backups older than this are removed (the newest is always kept); 0: no limit
 * @param timeout  how long a node's part of a backup may take, its snapshot and its upload
 * @param maxBytesPerSecond  how fast a node's part reads its snapshot, to checksum, count and upload
 *                 it, a cap on the disk bandwidth a backup takes from serving (as RocksDB's backup
 *                 engine's rate limit); 0: as fast as it can
 */
@Validated
@ConfigurationProperties("kvlab.backup")
public record BackupProperties(
        @NotNull @DefaultValue("") String target,
        @NotNull @Valid @DefaultValue S3 s3,
        @Min(0) @DefaultValue("7") int keepLast,
        @NotNull @DefaultValue("0s") Duration maxAge,
        @NotNull @DefaultValue("1h") Duration timeout,
        @NotNull @DefaultValue("0") DataSize maxBytesPerSecond) {

    public boolean enabled() {
        return !target.isBlank();
    }

    /**
     * @param endpoint       the store's URL ({@code http://seaweedfs:8333}); empty: AWS S3 itself
     * @param region         the region to sign for
     * @param pathStyle      bucket in the path, not the host name: what most S3-compatible servers want
     * @param accessKey      the access key id; or
     * @param accessKeyFile  a file holding it (a mounted Kubernetes Secret)
     * @param secretKey      the secret access key; or
     * @param secretKeyFile  a file holding it
     */
    public record S3(
            @NotNull @DefaultValue("") String endpoint,
            @NotNull @DefaultValue("us-east-1") String region,
            @DefaultValue("true") boolean pathStyle,
            @NotNull @DefaultValue("") String accessKey,
            @NotNull @DefaultValue("") String accessKeyFile,
            @NotNull @DefaultValue("") String secretKey,
            @NotNull @DefaultValue("") String secretKeyFile) {
    }
}
