package dev.kvlab.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A node that has left is out of the topology until it joins again, or until the listing no
 * longer names it (a later node of that name then joins as any new one); this node and nodes the
 * listing does not name are never taken out.
 */
class DepartedNodesTest {

    static final List<String> FOUR = List.of("http://a:1", "http://b:1", "http://c:1", "http://d:1");

    final AtomicReference<Topology> listing = new AtomicReference<>(new Topology(FOUR, "http://a:1"));
    final DepartedNodes topology = new DepartedNodes(listing::get);

    @Test
    void aNodeThatLeftIsOutUntilItJoinsAgain() {
        assertThat(topology.left("http://d:1")).isTrue();
        assertThat(topology.current().nodes()).containsExactly("http://a:1", "http://b:1", "http://c:1");
        assertThat(topology.current()).isSameAs(topology.current());
        assertThat(topology.hasLeft("http://d:1")).isTrue();

        assertThat(topology.joined("http://d:1")).isTrue();
        assertThat(topology.current().nodes()).isEqualTo(FOUR);
        assertThat(topology.hasLeft("http://d:1")).isFalse();
    }

    @Test
    void aDepartureIsForgottenOnceTheListingNoLongerNamesTheNode() {
        topology.left("http://d:1");
        listing.set(new Topology(FOUR.subList(0, 3), "http://a:1"));
        assertThat(topology.current().nodes()).containsExactly("http://a:1", "http://b:1", "http://c:1");
        assertThat(topology.hasLeft("http://d:1")).isFalse();

        listing.set(new Topology(FOUR, "http://a:1"));
        assertThat(topology.current().nodes()).as("a new node of the departed one's name").isEqualTo(FOUR);
    }

    @Test
    void neitherThisNodeNorAnUnlistedOneIsTakenOut() {
        assertThat(topology.left("http://a:1")).isFalse();
        assertThat(topology.left("http://e:1")).isFalse();
        assertThat(topology.joined("http://e:1")).isFalse();
        assertThat(topology.current().nodes()).isEqualTo(FOUR);
    }
}
