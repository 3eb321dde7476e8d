package dev.kvlab.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

class StoragePropertiesTest {

    @Test
    void theMemoryReadsBindWithTheirDefaults() {
        StorageProperties bound = bind(Map.of("kvlab.storage.dir", "/tmp/x"));

        assertThat(bound.memoryReads()).isEqualTo(StorageProperties.MemoryReads.DEFAULTS);
        assertThat(bound.readBatch()).isEqualTo(StorageProperties.ReadBatch.DEFAULTS);
    }

    @Test
    void theMemoryReadsBindFromTheirProperties() {
        StorageProperties bound = bind(Map.of(
                "kvlab.storage.memory-reads.adaptive", "false",
                "kvlab.storage.memory-reads.min-hit-rate", "0.5",
                "kvlab.storage.memory-reads.window", "64",
                "kvlab.storage.memory-reads.probe-every", "8"));

        assertThat(bound.memoryReads()).isEqualTo(new StorageProperties.MemoryReads(false, 0.5, 64, 8));
    }

    private static StorageProperties bind(Map<String, String> properties) {
        return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("kvlab.storage", StorageProperties.class);
    }
}
