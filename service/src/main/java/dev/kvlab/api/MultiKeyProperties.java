package dev.kvlab.api;

import dev.kvlab.http.RequestParameters;
import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.api.multi-key.*}: limits of the requests that carry many keys, the multi-get
 * ({@code /v0/entities/get}, keys in a POST's body or a GET's query) and the batch of writes
 * ({@code POST /v0/entities/batch}).
 *
 * @param maxKeys                the most keys one multi-get may list; more get 413
 * @param maxBatchOps            the most operations one batch may carry; more get 413
 * @param maxBatchSize           the largest batch body; larger get 413. It is held on the node's
 *                               memory budget with its decoded values while the batch runs
 * @param window                 keys (or operations) of one request the coordinator works on at
 *                               once; the next one starts as the oldest is written out
 * @param maxConcurrentRequests  multi-gets, and separately batches, a node serves at once; more
 *                               get 503
 */
@Validated
@ConfigurationProperties("kvlab.api.multi-key")
public record MultiKeyProperties(@DefaultValue("1000") int maxKeys,
                                 @DefaultValue("1000") int maxBatchOps,
                                 @NotNull @DefaultValue("8MB") DataSize maxBatchSize,
                                 @DefaultValue("16") int window,
                                 @DefaultValue("8") int maxConcurrentRequests) {

    /** A body is read into one array: it stays well below 2 GiB. */
    private static final DataSize LARGEST_BATCH = DataSize.ofMegabytes(512);

    public MultiKeyProperties {
        atLeastOne("max-keys", maxKeys);
        atLeastOne("max-batch-ops", maxBatchOps);
        atLeastOne("window", window);
        atLeastOne("max-concurrent-requests", maxConcurrentRequests);
        if (maxKeys > 1_000_000) {
            throw new IllegalArgumentException("kvlab.api.multi-key.max-keys must be at most 1000000, was " + maxKeys);
        }
        if (maxBatchSize != null && (maxBatchSize.toBytes() < 1 || maxBatchSize.compareTo(LARGEST_BATCH) > 0)) {
            throw new IllegalArgumentException("kvlab.api.multi-key.max-batch-size must be within 1B.." + LARGEST_BATCH + ", was " + maxBatchSize);
        }
    }

    /** The largest list of keys: the most keys, each of the longest, one per line. */
    public DataSize maxKeysSize() {
        return DataSize.ofBytes((long) maxKeys * (RequestParameters.MAX_KEY_BYTES + 1));
    }

    private static void atLeastOne(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException("kvlab.api.multi-key." + name + " must be at least 1, was " + value);
        }
    }
}
