package dev.kvlab.backup;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Backups in a bucket of an S3-compatible store (AWS S3, SeaweedFS, MinIO, Ceph...), through the
 * AWS SDK's synchronous client over the JDK's HTTP client. Keys go under the target's prefix. A
 * file up to {@link #MULTIPART_THRESHOLD} is one PUT (S3 takes up to 5 GB in one, so the SDK's
 * transfer manager is not needed); a bigger one is a multipart upload of {@link #PART_BYTES}
 * parts, so a failed part is sent again alone, and an upload that fails is aborted, leaving no
 * parts behind. S3 shows an object only once it is whole.
 *
 * <p>Every call is bounded: connecting, each read of the socket, each attempt, and the call with
 * its retries.
 */
public final class S3Target implements BackupTarget {

    static final long MULTIPART_THRESHOLD = 128L * 1024 * 1024;
    static final long PART_BYTES = 64L * 1024 * 1024;
    /** Keys per page of a listing: S3's most. */
    static final int LIST_PAGE = 1000;
    /** S3's limit of parts in one upload. */
    private static final int MAX_PARTS = 10_000;
    private static final String OCTET_STREAM = "application/octet-stream";
    /**
     * 10 s to connect; a connection that sends nothing for 60 s is dead; an attempt, which sends at
     * most {@link #MULTIPART_THRESHOLD} bytes, may take 10 minutes (0.25 MB/s); a call with its
     * retries 30 minutes.
     */
    static final Timeouts TIMEOUTS = new Timeouts(Duration.ofSeconds(10), Duration.ofSeconds(60), Duration.ofMinutes(10),
            Duration.ofMinutes(30));

    private final S3Client s3;
    private final String bucket;
    /** Empty, or the prefix with its trailing {@code /}. */
    private final String prefix;
    private final String description;
    private final long multipartThreshold;
    private final long partBytes;
    private final int listPage;

    S3Target(S3Client s3, String bucket, String prefix, String description, long multipartThreshold, long partBytes,
             int listPage) {
        this.s3 = s3;
        this.bucket = bucket;
        this.prefix = prefix.isEmpty() ? "" : prefix + "/";
        this.description = description;
        this.multipartThreshold = multipartThreshold;
        this.partBytes = partBytes;
        this.listPage = listPage;
    }

    /**
     * A target in {@code bucket} under {@code prefix} (empty: the bucket's root), reached as
     * {@code settings} say, signing with the given keys. The bucket must exist.
     */
    public static S3Target open(String bucket, String prefix, BackupProperties.S3 settings, String accessKey,
                                String secretKey) {
        String where = "s3://" + bucket + (prefix.isEmpty() ? "" : "/" + prefix)
                + (settings.endpoint().isBlank() ? "" : " at " + settings.endpoint());
        return new S3Target(client(settings, accessKey, secretKey, TIMEOUTS), bucket, prefix, where, MULTIPART_THRESHOLD,
                PART_BYTES, LIST_PAGE);
    }

    /** How long a call may take: to connect, without a byte on the socket, per attempt, with its retries. */
    record Timeouts(Duration connect, Duration socket, Duration attempt, Duration call) {
    }

    static S3Client client(BackupProperties.S3 settings, String accessKey, String secretKey, Timeouts timeouts) {
        var builder = S3Client.builder()
                .region(Region.of(settings.region()))
                .forcePathStyle(settings.pathStyle())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .httpClientBuilder(UrlConnectionHttpClient.builder()
                        .connectionTimeout(timeouts.connect())
                        .socketTimeout(timeouts.socket()))
                .overrideConfiguration(ClientOverrideConfiguration.builder()
                        .apiCallAttemptTimeout(timeouts.attempt())
                        .apiCallTimeout(timeouts.call())
                        .build())
                // Checksums only where S3 requires them: many S3-compatible stores refuse the
                // trailing checksums the SDK sends by default, and a restore checks every file's
                // SHA-256 anyway.
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        if (!settings.endpoint().isBlank()) {
            builder.endpointOverride(URI.create(settings.endpoint()));
        }
        return builder.build();
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public boolean exists(String key) throws IOException {
        try {
            s3.headObject(request -> request.bucket(bucket).key(prefix + key));
            return true;
        } catch (NoSuchKeyException e) {
            return false;
        } catch (S3Exception e) {
            if (e.statusCode() == 404 && !(e instanceof NoSuchBucketException)) {
                return false;
            }
            throw failure("look for", key, e);
        } catch (SdkException e) {
            throw failure("look for", key, e);
        }
    }

    @Override
    public void put(String key, Path file, BackupPace pace) throws IOException {
        long size = Files.size(file);
        try {
            if (size <= multipartThreshold) {
                s3.putObject(request -> request.bucket(bucket).key(prefix + key),
                        RequestBody.fromContentProvider(new FilePart(file, 0, size, pace), size, OCTET_STREAM));
            } else {
                putInParts(prefix + key, file, size, pace);
            }
        } catch (SdkException e) {
            throw failure("store", key, e);
        }
    }

    @Override
    public void put(String key, byte[] bytes) throws IOException {
        try {
            s3.putObject(request -> request.bucket(bucket).key(prefix + key), RequestBody.fromBytes(bytes));
        } catch (SdkException e) {
            throw failure("store", key, e);
        }
    }

    private void putInParts(String object, Path file, long size, BackupPace pace) {
        long part = Math.max(partBytes, Math.ceilDiv(size, MAX_PARTS));
        String upload = s3.createMultipartUpload(request -> request.bucket(bucket).key(object)).uploadId();
        try {
            List<CompletedPart> parts = new ArrayList<>();
            for (long offset = 0; offset < size; offset += part) {
                int number = parts.size() + 1;
                long length = Math.min(part, size - offset);
                String etag = s3.uploadPart(request -> request.bucket(bucket).key(object).uploadId(upload)
                                .partNumber(number).contentLength(length),
                        RequestBody.fromContentProvider(new FilePart(file, offset, length, pace), length, OCTET_STREAM)).eTag();
                parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
            }
            s3.completeMultipartUpload(request -> request.bucket(bucket).key(object).uploadId(upload)
                    .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
        } catch (RuntimeException e) {
            try {
                s3.abortMultipartUpload(request -> request.bucket(bucket).key(object).uploadId(upload));
            } catch (SdkException abort) {
                e.addSuppressed(abort);
            }
            throw e;
        }
    }

    @Override
    public InputStream open(String key) throws IOException {
        try {
            return s3.getObject(request -> request.bucket(bucket).key(prefix + key));
        } catch (NoSuchKeyException e) {
            throw noSuchObject(key, e);
        } catch (S3Exception e) {
            if (e.statusCode() == 404 && !(e instanceof NoSuchBucketException)) {
                throw noSuchObject(key, e);
            }
            throw failure("read", key, e);
        } catch (SdkException e) {
            throw failure("read", key, e);
        }
    }

    @Override
    public List<StoredObject> list(String keyPrefix) throws IOException {
        List<StoredObject> objects = new ArrayList<>();
        try {
            // The paginator asks for the next page (up to 1000 keys each) as the loop reaches it.
            for (S3Object object : s3.listObjectsV2Paginator(request -> request.bucket(bucket).prefix(prefix + keyPrefix)
                    .maxKeys(listPage))
                    .contents()) {
                objects.add(new StoredObject(object.key().substring(prefix.length()), object.size(),
                        object.lastModified().toEpochMilli()));
            }
        } catch (SdkException e) {
            throw failure("list", keyPrefix + "*", e);
        }
        objects.sort(Comparator.comparing(StoredObject::key));
        return objects;
    }

    @Override
    public void delete(String key) throws IOException {
        try {
            s3.deleteObject(request -> request.bucket(bucket).key(prefix + key));
        } catch (NoSuchKeyException e) {
            // gone already
        } catch (SdkException e) {
            throw failure("delete", key, e);
        }
    }

    @Override
    public void close() {
        s3.close();
    }

    private NoSuchFileException noSuchObject(String key, S3Exception e) {
        NoSuchFileException none = new NoSuchFileException(key, null, "no such object in " + description);
        none.initCause(e);
        return none;
    }

    private IOException failure(String what, String key, SdkException e) {
        String why = e instanceof NoSuchBucketException
                ? "the bucket " + bucket + " does not exist (create it first)"
                : e.getMessage();
        return new IOException("cannot " + what + " " + key + " in " + description + ": " + why, e);
    }

    /** {@code length} bytes of a file from {@code offset}, read at {@code pace}: an upload or a part of one, readable again for a retry. */
    private record FilePart(Path file, long offset, long length, BackupPace pace) implements ContentStreamProvider {

        @Override
        public InputStream newStream() {
            try {
                FileChannel channel = FileChannel.open(file, StandardOpenOption.READ).position(offset);
                return pace.paced(new BoundedStream(Channels.newInputStream(channel), length));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
            }
        }
    }

    /** The first {@code remaining} bytes of a stream. */
    private static final class BoundedStream extends InputStream {

        private final InputStream in;
        private long remaining;

        BoundedStream(InputStream in, long remaining) {
            this.in = in;
            this.remaining = remaining;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int b = in.read();
            if (b >= 0) {
                remaining--;
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int read = in.read(buffer, offset, (int) Math.min(length, remaining));
            if (read > 0) {
                remaining -= read;
            }
            return read;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
