package dev.kvlab.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A node that has left is out of the topology until it serves again, or until the listing no
 * longer names it; a node that comes into the listing after this one started is out until it is
 * seen to serve or its join timeout has passed; this node and nodes the listing does not name are
 * never taken in or out.
 */
class ServingNodesTest {

    static final List<String> FOUR = List.of("http://a:1", "http://b:1", "http://c:1", "http://d:1");
    static final List<String> THREE = FOUR.subList(0, 3);

    final AtomicReference<Topology> listing = new AtomicReference<>(new Topology(FOUR, "http://a:1"));
    final AtomicLong now = new AtomicLong(1_000_000);
    final ServingNodes topology = new ServingNodes(listing::get, Duration.ofSeconds(120), now::get);

    @Test
    void aNodeThatLeftIsOutUntilItServesAgain() {
        assertThat(topology.left("http://d:1")).isTrue();
        assertThat(topology.current().nodes()).isEqualTo(THREE);
        assertThat(topology.current()).isSameAs(topology.current());
        assertThat(topology.hasLeft("http://d:1")).isTrue();

        assertThat(topology.serves("http://d:1")).isTrue();
        assertThat(topology.current().nodes()).isEqualTo(FOUR);
        assertThat(topology.hasLeft("http://d:1")).isFalse();
    }

    @Test
    void aDepartureIsForgottenOnceTheListingNoLongerNamesTheNode() {
        topology.left("http://d:1");
        listing.set(new Topology(THREE, "http://a:1"));
        assertThat(topology.current().nodes()).isEqualTo(THREE);
        assertThat(topology.hasLeft("http://d:1")).isFalse();

        listing.set(new Topology(FOUR, "http://a:1"));
        assertThat(topology.current().nodes()).as("a new node of the departed one's name joins as any new one").isEqualTo(THREE);
        assertThat(topology.joining()).containsExactly("http://d:1");
    }

    @Test
    void theNodesListedAtStartAreTakenAsTheyAre() {
        assertThat(topology.current().nodes()).isEqualTo(FOUR);
        assertThat(topology.joining()).isEmpty();
    }

    @Test
    void aNewlyListedNodeIsOutUntilItServes() {
        listing.set(new Topology(THREE, "http://a:1"));
        ServingNodes serving = new ServingNodes(listing::get, Duration.ofSeconds(120), now::get);
        listing.set(new Topology(FOUR, "http://a:1"));

        assertThat(serving.current().nodes()).isEqualTo(THREE);
        assertThat(serving.joining()).containsExactly("http://d:1");
        now.addAndGet(60_000);
        assertThat(serving.current().nodes()).isEqualTo(THREE);

        assertThat(serving.serves("http://d:1")).isTrue();
        assertThat(serving.current().nodes()).isEqualTo(FOUR);
        assertThat(serving.joining()).isEmpty();
    }

    @Test
    void aNewlyListedNodeIsTakenOnceItsJoinTimeoutHasPassed() {
        listing.set(new Topology(THREE, "http://a:1"));
        ServingNodes serving = new ServingNodes(listing::get, Duration.ofSeconds(120), now::get);
        listing.set(new Topology(FOUR, "http://a:1"));
        assertThat(serving.current().nodes()).isEqualTo(THREE);

        now.addAndGet(119_999);
        assertThat(serving.current().nodes()).isEqualTo(THREE);
        now.addAndGet(1);
        assertThat(serving.current().nodes()).as("the time limit: every node takes a listed node in the end").isEqualTo(FOUR);
        assertThat(serving.joining()).isEmpty();
    }

    @Test
    void aJoiningNodeTheListingDropsIsForgotten() {
        listing.set(new Topology(THREE, "http://a:1"));
        ServingNodes serving = new ServingNodes(listing::get, Duration.ofSeconds(120), now::get);
        listing.set(new Topology(FOUR, "http://a:1"));
        assertThat(serving.joining()).containsExactly("http://d:1");

        listing.set(new Topology(THREE, "http://a:1"));
        assertThat(serving.current().nodes()).isEqualTo(THREE);
        assertThat(serving.joining()).isEmpty();
        assertThat(serving.serves("http://d:1")).as("not listed").isFalse();
    }

    @Test
    void thisNodeIsNeverJoiningNorTakenOut() {
        AtomicReference<Topology> alone = new AtomicReference<>(new Topology(List.of("http://b:1"), "http://b:1"));
        ServingNodes serving = new ServingNodes(alone::get, Duration.ofSeconds(120), now::get);
        alone.set(new Topology(FOUR, "http://b:1"));
        assertThat(serving.current().nodes()).containsExactly("http://b:1");
        assertThat(serving.joining()).containsExactlyInAnyOrder("http://a:1", "http://c:1", "http://d:1");

        assertThat(topology.left("http://a:1")).isFalse();
        assertThat(topology.left("http://e:1")).isFalse();
        assertThat(topology.serves("http://e:1")).isFalse();
        assertThat(topology.current().nodes()).isEqualTo(FOUR);
    }
}
