package dev.kvlab.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Highest-random-weight (rendezvous) hashing: every node gets a pseudo-random score for a key and
 * the key's replicas are the nodes in descending score order. Every node computes the same order
 * from the same node names, the replicas for a smaller {@code from} are a prefix of those for a
 * larger one, and adding a node only moves the keys for which the new node scores highest.
 */
public final class RendezvousHashing {

    private final List<String> nodes;
    private final long[] nodeHashes;

    public RendezvousHashing(List<String> nodes) {
        this.nodes = List.copyOf(nodes);
        this.nodeHashes = new long[nodes.size()];
        for (int i = 0; i < nodeHashes.length; i++) {
            nodeHashes[i] = hash(nodes.get(i).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The first {@code count} nodes of the key's replica order. */
    public List<String> replicasFor(byte[] key, int count) {
        if (count < 1 || count > nodes.size()) {
            throw new IllegalArgumentException("count must be within 1.." + nodes.size() + ", was " + count);
        }
        long keyHash = hash(key);
        long[] scores = new long[nodeHashes.length];
        Integer[] order = new Integer[nodeHashes.length];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = mix(keyHash ^ nodeHashes[i]);
            order[i] = i;
        }
        // Highest score first; equal scores (practically never) fall back to the node name.
        Arrays.sort(order, (a, b) -> {
            int byScore = Long.compareUnsigned(scores[b], scores[a]);
            return byScore != 0 ? byScore : nodes.get(a).compareTo(nodes.get(b));
        });
        List<String> replicas = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            replicas.add(nodes.get(order[i]));
        }
        return replicas;
    }

    /** FNV-1a over the bytes, then a full-avalanche finalizer so that nearby inputs score apart. */
    public static long hash(byte[] bytes) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
        }
        return mix(hash);
    }

    /** MurmurHash3's 64-bit finalizer (fmix64): a bijection in which every input bit flips about half the output bits. */
    public static long mix(long value) {
        long h = value;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
