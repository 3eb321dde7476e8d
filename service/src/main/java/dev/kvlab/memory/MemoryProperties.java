package dev.kvlab.memory;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.memory.*}: how much of the heap requests in flight may hold.
 *
 * @param maxBytesInFlight the bytes of values the node holds at once for requests in flight
 *                         ({@link MemoryBudget}); past it a request gets 503. Unset: a quarter of
 *                         the heap. At least one body of the largest value
 * @param replicaShare     the part of it kept for the work the node does for its peers' requests
 *                         ({@link MemoryBudget#forReplicaWork}); 0 keeps one pool for both. A read
 *                         at {@code from} replicas holds {@code from} records on its coordinator
 *                         and one on each other replica, so with every node coordinating alike a
 *                         node holds {@code from - 1} records for its peers for every {@code from}
 *                         it holds for its own requests: 0.4 at {@code from} 3
 */
@Validated
@ConfigurationProperties("kvlab.memory")
public record MemoryProperties(DataSize maxBytesInFlight,
                               @DefaultValue("0.4") @DecimalMin("0.0") @DecimalMax("0.9") double replicaShare) {

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

    /** These settings for a node that has no peers: nothing kept apart for their requests. */
    public MemoryProperties withoutPeers() {
        return new MemoryProperties(maxBytesInFlight, 0);
    }

    /**
     * The node's budget: {@link #bytesInFlight} bytes, {@link #replicaShare} of them kept for its
     * peers' requests, each side with room for at least one body of the largest value
     * ({@code smallest}); one pool when the budget is too small for two such sides.
     */
    public MemoryBudget budget(long maxHeapBytes, long smallest, long regionBytes) {
        long total = bytesInFlight(maxHeapBytes, smallest);
        long replicas = Math.max((long) (total * replicaShare), smallest);
        if (replicaShare <= 0 || total - replicas < smallest) {
            return new MemoryBudget(total, regionBytes);
        }
        return new MemoryBudget(total, regionBytes, replicas);
    }
}
