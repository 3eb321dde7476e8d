package dev.kvlab.heal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.cluster.ServingNodes;
import dev.kvlab.cluster.Topology;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** A joining node is taken into the topology once it answers the probe, and not before. */
class JoiningProbeTest {

    static final List<String> THREE = List.of("http://a:1", "http://b:1", "http://c:1");
    static final List<String> FIVE = List.of("http://a:1", "http://b:1", "http://c:1", "http://d:1", "http://e:1");

    @Test
    void aJoiningNodeIsTakenOnceItAnswers() {
        AtomicReference<Topology> listing = new AtomicReference<>(new Topology(THREE, "http://a:1"));
        ServingNodes serving = new ServingNodes(listing::get, Duration.ofHours(1), System::currentTimeMillis);
        listing.set(new Topology(FIVE, "http://a:1"));
        Map<String, AtomicInteger> asked = new ConcurrentHashMap<>();
        // d answers from its third probe on; e never does.
        JoiningProbe probe = new JoiningProbe(serving, (node, self) -> {
            assertThat(self).isEqualTo("http://a:1");
            int times = asked.computeIfAbsent(node, any -> new AtomicInteger()).incrementAndGet();
            return Mono.just(node.equals("http://d:1") && times >= 3);
        }, Duration.ofMillis(20));
        assertThat(serving.current().nodes()).isEqualTo(THREE);

        probe.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> serving.current().nodes().contains("http://d:1"));
            assertThat(asked.get("http://d:1").get()).isGreaterThanOrEqualTo(3);
            await().atMost(Duration.ofSeconds(10)).until(() -> asked.get("http://e:1").get() >= 10);
            assertThat(serving.current().nodes()).containsExactly("http://a:1", "http://b:1", "http://c:1", "http://d:1");
            assertThat(serving.joining()).containsExactly("http://e:1");
        } finally {
            probe.close();
        }
        int afterClose = asked.get("http://e:1").get();
        await().pollDelay(Duration.ofMillis(200)).atMost(Duration.ofSeconds(1)).until(() -> true);
        assertThat(asked.get("http://e:1").get()).as("no probe once closed").isLessThanOrEqualTo(afterClose + 1);
    }
}
