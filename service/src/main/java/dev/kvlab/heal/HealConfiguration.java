package dev.kvlab.heal;

import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.cluster.WallClock;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.storage.LocalStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** How the cluster heals itself: hints of missed writes, replayed. */
@Configuration(proxyBeanMethods = false)
public class HealConfiguration {

    @Bean
    HintStore hintStore(LocalStore store, MemoryBudget budget, HealingProperties properties, WallClock clock, MeterRegistry registry) {
        HintStore hints = new HintStore(store, budget, properties.hints(), clock);
        hints.load();
        Gauge.builder("kvlab.hints.pending", hints, HintStore::pendingCount)
                .description("Hints of missed writes kept for peers, not replayed yet")
                .register(registry);
        FunctionCounter.builder("kvlab.hints.written", hints, HintStore::written)
                .description("Hints kept of writes peers missed (their calls failed or timed out)")
                .register(registry);
        FunctionCounter.builder("kvlab.hints.dropped", hints, HintStore::dropped)
                .description("Hints not kept: a peer's share full, a peer away longer than kvlab.heal.hints.window, or no memory")
                .register(registry);
        return hints;
    }

    @Bean(destroyMethod = "close")
    HintReplayer hintReplayer(HintStore hints, TopologyProvider topology, ReplicaDirectory replicas, HealingProperties properties,
                              MeterRegistry registry) {
        HintReplayer replayer = new HintReplayer(hints, topology, replicas, properties.hints()).start();
        FunctionCounter.builder("kvlab.hints.replayed", replayer, HintReplayer::replayed)
                .description("Hints replayed to the peers that had missed them")
                .register(registry);
        return replayer;
    }
}
