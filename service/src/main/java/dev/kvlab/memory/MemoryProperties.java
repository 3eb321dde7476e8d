package dev.kvlab.memory;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.memory.*}: how much of the heap requests in flight may hold.
 *
 * @param maxBytesInFlight the bytes of values the node holds at once for requests in flight
 *                         ({@link MemoryBudget}); past it a request gets 503. Unset: a quarter of
 *                         the heap. At least one body of the largest value
 */
@Validated
@ConfigurationProperties("kvlab.memory")
public record MemoryProperties(DataSize maxBytesInFlight) {

    /** The budget in bytes: as configured, or a quarter of {@code maxHeapBytes}; never below {@code smallest}. */
    public long bytesInFlight(long maxHeapBytes, long smallest) {
        if (maxBytesInFlight != null) {
            if (maxBytesInFlight.toBytes() < smallest) {
                throw new IllegalArgumentException("kvlab.memory.max-bytes-in-flight must hold one body of the largest value, "
                        + smallest + " bytes (kvlab.api.max-value-size and a record header), was " + maxBytesInFlight);
            }
            return maxBytesInFlight.toBytes();
        }
        return Math.max(maxHeapBytes / 4, smallest);
    }
}
