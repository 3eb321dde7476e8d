package dev.kvlab.backup;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Opens the target that {@code kvlab.backup.target} names: {@code s3://bucket[/prefix]} for a
 * bucket of an S3-compatible store ({@link S3Target}), anything else a directory
 * ({@link DirectoryTarget}). A target that cannot be what it says is refused with the reason,
 * before any call. The S3 keys are read when the target is opened, from their files when given
 * so: a rotated Secret holds from the next opening on.
 */
public final class BackupTargets {

    private static final String S3 = "s3://";
    /** S3's rule for bucket names: 3 to 63 lower-case letters, digits, dots and hyphens. */
    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");
    private static final Pattern SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://.*");

    private BackupTargets() {
    }

    public static BackupTarget open(BackupProperties properties) {
        String target = properties.target().strip();
        if (target.isEmpty()) {
            throw new IllegalArgumentException("no backup target: set kvlab.backup.target (KVLAB_BACKUP_TARGET) to a "
                    + "directory or to s3://bucket[/prefix]");
        }
        if (target.regionMatches(true, 0, S3, 0, S3.length())) {
            return s3(target.substring(S3.length()), properties.s3());
        }
        if (SCHEME.matcher(target).matches()) {
            throw new IllegalArgumentException("kvlab.backup.target " + target + ": kvlab keeps backups in a directory "
                    + "or in s3://bucket[/prefix], not in " + target.substring(0, target.indexOf(':')) + "://");
        }
        return new DirectoryTarget(Path.of(target));
    }

    private static S3Target s3(String location, BackupProperties.S3 settings) {
        int slash = location.indexOf('/');
        String bucket = slash < 0 ? location : location.substring(0, slash);
        String prefix = slash < 0 ? "" : trimSlashes(location.substring(slash + 1));
        if (bucket.isEmpty()) {
            throw new IllegalArgumentException("kvlab.backup.target s3://" + location + " names no bucket: "
                    + "write s3://bucket[/prefix]");
        }
        if (!BUCKET.matcher(bucket).matches()) {
            throw new IllegalArgumentException("kvlab.backup.target: '" + bucket + "' is not a bucket's name "
                    + "(3 to 63 lower-case letters, digits, '.' and '-')");
        }
        if (prefix.contains("//") || ("/" + prefix + "/").contains("/../") || ("/" + prefix + "/").contains("/./")) {
            throw new IllegalArgumentException("kvlab.backup.target: the prefix '" + prefix + "' has an empty, '.' or '..' part");
        }
        checkEndpoint(settings.endpoint());
        if (settings.region().isBlank()) {
            throw new IllegalArgumentException("kvlab.backup.s3.region is empty: name the region requests are signed for "
                    + "(us-east-1 suits most S3-compatible stores)");
        }
        String accessKey = key("access key", settings.accessKey(), settings.accessKeyFile(), "access-key");
        String secretKey = key("secret key", settings.secretKey(), settings.secretKeyFile(), "secret-key");
        return S3Target.open(bucket, prefix, settings, accessKey, secretKey);
    }

    private static String trimSlashes(String prefix) {
        int start = 0;
        int end = prefix.length();
        while (start < end && prefix.charAt(start) == '/') {
            start++;
        }
        while (end > start && prefix.charAt(end - 1) == '/') {
            end--;
        }
        return prefix.substring(start, end);
    }

    private static void checkEndpoint(String endpoint) {
        if (endpoint.isBlank()) {
            return; // AWS S3 itself, its endpoint from the region
        }
        try {
            URI uri = new URI(endpoint);
            if (!("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                    || uri.getHost() == null || uri.getUserInfo() != null) {
                throw new URISyntaxException(endpoint, "not http(s)://host[:port]");
            }
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("kvlab.backup.s3.endpoint '" + endpoint + "' is not an http(s)://host[:port] "
                    + "URL: " + e.getReason());
        }
    }

    /** A key given as text or in a file (its text, surrounding white space ignored); one of the two. */
    private static String key(String what, String text, String file, String property) {
        if (!text.isBlank() && !file.isBlank()) {
            throw new IllegalArgumentException("set kvlab.backup.s3." + property + " or kvlab.backup.s3." + property
                    + "-file, not both");
        }
        if (!file.isBlank()) {
            try {
                text = Files.readString(Path.of(file));
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the S3 " + what + " from kvlab.backup.s3." + property
                        + "-file " + file + ": " + e.getMessage(), e);
            }
            if (text.isBlank()) {
                throw new IllegalArgumentException("kvlab.backup.s3." + property + "-file " + file + " is empty");
            }
        }
        if (text.isBlank()) {
            throw new IllegalArgumentException("an s3:// backup target needs the store's " + what + ": set kvlab.backup.s3."
                    + property + " or kvlab.backup.s3." + property + "-file (KVLAB_BACKUP_S3_"
                    + property.replace("-", "").toUpperCase(java.util.Locale.ROOT) + "[FILE])");
        }
        return text.strip();
    }
}
