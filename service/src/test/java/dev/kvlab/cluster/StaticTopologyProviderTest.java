package dev.kvlab.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

class StaticTopologyProviderTest {

    @Test
    void noNodeListIsAClusterOfOne() {
        Topology topology = new StaticTopologyProvider(properties(List.of(), null)).current();

        assertThat(topology.size()).isEqualTo(1);
        assertThat(topology.self()).isEqualTo(ClusterProperties.SINGLE_NODE);
    }

    @Test
    void everyNodeSeesTheSameOrderWhateverOrderItWasGiven() {
        Topology a = new StaticTopologyProvider(properties(List.of("http://b:1", "http://a:1/", "http://c:1"), "http://a:1")).current();
        Topology c = new StaticTopologyProvider(properties(List.of("http://c:1", "http://b:1", "http://a:1"), "http://c:1/")).current();

        assertThat(a.nodes()).containsExactly("http://a:1", "http://b:1", "http://c:1").isEqualTo(c.nodes());
        assertThat(c.self()).isEqualTo("http://c:1");
    }

    @Test
    void selfMustBeOneOfTheNodes() {
        assertThatThrownBy(() -> new StaticTopologyProvider(properties(List.of("http://a:1", "http://b:1"), "http://z:1")))
                .hasMessageContaining("not one of kvlab.cluster.nodes");
        assertThatThrownBy(() -> new StaticTopologyProvider(properties(List.of("http://a:1"), null)))
                .hasMessageContaining("kvlab.cluster.self");
    }

    @Test
    void aNodeListedTwiceIsRejected() {
        assertThatThrownBy(() -> new StaticTopologyProvider(properties(List.of("http://a:1", "http://a:1/"), "http://a:1")))
                .hasMessageContaining("twice");
    }

    private static ClusterProperties properties(List<String> nodes, String self) {
        return new ClusterProperties(ClusterProperties.Discovery.STATIC, nodes.stream().map(URI::create).toList(),
                self == null ? null : URI.create(self),
                new ClusterProperties.Dns(null, null, "http", 0, 0, java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(60), java.time.Duration.ofSeconds(120), null), null, null, java.time.Duration.ofSeconds(60), java.time.Duration.ZERO);
    }
}
