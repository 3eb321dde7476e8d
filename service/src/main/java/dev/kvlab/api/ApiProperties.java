package dev.kvlab.api;

import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.api.*}: limits of the client API.
 *
 * @param maxValueSize the largest value a PUT may carry; larger bodies get 413
 */
@Validated
@ConfigurationProperties("kvlab.api")
public record ApiProperties(@NotNull @DefaultValue("1MB") DataSize maxValueSize) {

    /** API.md's limit on a key, in UTF-8 bytes after URL-decoding; fixed, not configurable. */
    public static final int MAX_KEY_BYTES = 1024;

    /** Values are held in one Java array with the record header, so the limit stays below 2 GiB. */
    private static final DataSize LARGEST = DataSize.ofMegabytes(1024);

    public ApiProperties {
        if (maxValueSize != null && (maxValueSize.toBytes() < 0 || maxValueSize.compareTo(LARGEST) > 0)) {
            throw new IllegalArgumentException("kvlab.api.max-value-size must be within 0B.." + LARGEST + ", was " + maxValueSize);
        }
    }
}
