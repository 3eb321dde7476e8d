package dev.kvlab.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class RendezvousHashingTest {

    static final int KEYS = 100_000;

    static List<String> nodes(int count) {
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            nodes.add("http://kvlab-" + i + ".kvlab-headless.default.svc.cluster.local:8080");
        }
        return nodes;
    }

    static byte[] key(int i) {
        return Integer.toString(i).getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {3, 4, 5, 6, 7, 8, 9, 10})
    void everyNodeOwnsItsShareOfKeysWithinFivePercentOfTheMean(int nodeCount) {
        RendezvousHashing hashing = new RendezvousHashing(nodes(nodeCount));
        Map<String, Integer> owned = new HashMap<>();
        for (int i = 0; i < KEYS; i++) {
            owned.merge(hashing.replicasFor(key(i), 1).getFirst(), 1, Integer::sum);
        }

        double mean = (double) KEYS / nodeCount;
        assertThat(owned).hasSize(nodeCount);
        assertThat(owned.values()).allSatisfy(count -> assertThat(Math.abs(count - mean) / mean).isLessThan(0.05));
    }

    @ParameterizedTest(name = "{0} -> {0}+1 nodes")
    @ValueSource(ints = {3, 5, 9})
    void addingANodeMovesAboutOneInNPlusOneKeys(int nodeCount) {
        RendezvousHashing before = new RendezvousHashing(nodes(nodeCount));
        RendezvousHashing after = new RendezvousHashing(nodes(nodeCount + 1));
        String added = nodes(nodeCount + 1).getLast();
        int moved = 0;
        for (int i = 0; i < KEYS; i++) {
            String ownerBefore = before.replicasFor(key(i), 1).getFirst();
            String ownerAfter = after.replicasFor(key(i), 1).getFirst();
            if (!ownerBefore.equals(ownerAfter)) {
                moved++;
                assertThat(ownerAfter).as("a key only moves to the new node").isEqualTo(added);
            }
        }

        double expected = (double) KEYS / (nodeCount + 1);
        assertThat(Math.abs(moved - expected) / expected).isLessThan(0.05);
    }

    @Test
    void aSmallerFromIsAPrefixOfALargerOne() {
        RendezvousHashing hashing = new RendezvousHashing(nodes(5));
        for (int i = 0; i < 1000; i++) {
            List<String> all = hashing.replicasFor(key(i), 5);
            assertThat(all).doesNotHaveDuplicates();
            for (int from = 1; from <= 5; from++) {
                assertThat(hashing.replicasFor(key(i), from)).isEqualTo(all.subList(0, from));
            }
        }
    }

    @Test
    void theOrderDependsOnNodeNamesNotOnTheListOrder() {
        List<String> nodes = nodes(4);
        RendezvousHashing forward = new RendezvousHashing(nodes);
        RendezvousHashing backward = new RendezvousHashing(nodes.reversed());
        for (int i = 0; i < 1000; i++) {
            assertThat(forward.replicasFor(key(i), 4)).isEqualTo(backward.replicasFor(key(i), 4));
        }
    }
}
