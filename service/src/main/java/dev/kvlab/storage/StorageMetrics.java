package dev.kvlab.storage;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Map;

/** RocksDB's own figures and the storage queue, as gauges read when Prometheus scrapes. */
public final class StorageMetrics implements MeterBinder {

    /** RocksDB properties worth watching, with what they mean. */
    private static final Map<String, String> PROPERTIES = Map.of(
            "rocksdb.estimate-num-keys", "Estimated keys (values and tombstones)",
            "rocksdb.total-sst-files-size", "Bytes in SST files",
            "rocksdb.cur-size-all-mem-tables", "Bytes in memtables",
            "rocksdb.block-cache-usage", "Bytes in the block cache",
            "rocksdb.estimate-pending-compaction-bytes", "Bytes compaction still has to rewrite",
            "rocksdb.num-running-compactions", "Compactions running now");

    private final LocalStore store;

    public StorageMetrics(LocalStore store) {
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        PROPERTIES.forEach((property, description) -> Gauge.builder("kvlab.rocksdb", store, s -> s.longProperty(property))
                .description(description)
                .tag("property", property.substring("rocksdb.".length()))
                .register(registry));
        Gauge.builder("kvlab.storage.queued", store, LocalStore::queuedCalls)
                .description("Storage calls waiting for a storage thread")
                .register(registry);
    }
}
