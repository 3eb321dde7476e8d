package dev.kvlab.api;

import dev.kvlab.storage.Record;
import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.api.*}: limits of the client API.
 *
 * @param maxValueSize          the largest value a PUT may carry; larger bodies get 413
 * @param maxBodyBytesInFlight  the bytes of PUT bodies the node holds at once, over all requests;
 *                              a body with no room left gets 503. Unset: a sixteenth of the heap,
 *                              and never less than one body of the largest value
 */
@Validated
@ConfigurationProperties("kvlab.api")
public record ApiProperties(@NotNull @DefaultValue("1MB") DataSize maxValueSize, DataSize maxBodyBytesInFlight) {

    /** Values are held in one Java array with the record header, so the limit stays below 2 GiB. */
    private static final DataSize LARGEST = DataSize.ofMegabytes(1024);

    public ApiProperties {
        if (maxValueSize != null && (maxValueSize.toBytes() < 0 || maxValueSize.compareTo(LARGEST) > 0)) {
            throw new IllegalArgumentException("kvlab.api.max-value-size must be within 0B.." + LARGEST + ", was " + maxValueSize);
        }
        if (maxBodyBytesInFlight != null && maxValueSize != null && maxBodyBytesInFlight.toBytes() < largestBody(maxValueSize)) {
            throw new IllegalArgumentException("kvlab.api.max-body-bytes-in-flight must hold one body of the largest value, "
                    + largestBody(maxValueSize) + " bytes (kvlab.api.max-value-size and a record header), was " + maxBodyBytesInFlight);
        }
    }

    /** The budget of PUT bodies in bytes: as configured, or a sixteenth of {@code maxHeapBytes}. */
    public long bodyBytesInFlight(long maxHeapBytes) {
        return maxBodyBytesInFlight != null
                ? maxBodyBytesInFlight.toBytes()
                : Math.max(maxHeapBytes / 16, largestBody(maxValueSize));
    }

    /** What one body of the largest value holds: the value in an array with its record header. */
    private static long largestBody(DataSize maxValueSize) {
        return Record.HEADER_BYTES + maxValueSize.toBytes();
    }
}
