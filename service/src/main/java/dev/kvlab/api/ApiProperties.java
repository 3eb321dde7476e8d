package dev.kvlab.api;

import dev.kvlab.http.RequestParameters;
import dev.kvlab.storage.Record;
import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.api.*}: limits of the client API.
 *
 * @param maxValueSize         the largest value a PUT may carry; larger bodies get 413
 * @param maxConcurrentRanges  range reads ({@code /v0/entities}) a node coordinates at once; more
 *                             get 503
 */
@Validated
@ConfigurationProperties("kvlab.api")
public record ApiProperties(@NotNull @DefaultValue("1MB") DataSize maxValueSize, @DefaultValue("8") int maxConcurrentRanges) {

    /** Values are held in one Java array with the record header, so the limit stays below 2 GiB. */
    private static final DataSize LARGEST = DataSize.ofMegabytes(1024);

    public ApiProperties {
        if (maxValueSize != null && (maxValueSize.toBytes() < 0 || maxValueSize.compareTo(LARGEST) > 0)) {
            throw new IllegalArgumentException("kvlab.api.max-value-size must be within 0B.." + LARGEST + ", was " + maxValueSize);
        }
        if (maxConcurrentRanges < 1) {
            throw new IllegalArgumentException("kvlab.api.max-concurrent-ranges must be at least 1, was " + maxConcurrentRanges);
        }
    }

    /** What one body of the largest value holds: the value in an array with its record header. */
    public long largestBody() {
        return Record.MAX_HEADER_BYTES + maxValueSize.toBytes();
    }

    /** The bytes of the largest entry a stream can carry: the longest key and the largest record, framed. */
    public long largestEntry() {
        return 8L + RequestParameters.MAX_KEY_BYTES + largestBody();
    }
}
