package dev.kvlab.it.history;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvClient.ReplicaRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What each replica holds of each key, read from the replicas themselves with the replica
 * protocol ({@link KvClient#replicaRecord}): no coordinator, no quorum, no read repair, so reading
 * them changes nothing. A cluster has converged on a key when every replica holds the same record
 * (version, tombstone, value), which is then the newest any of them had.
 *
 * @param nodes   the nodes read, in order (for messages)
 * @param records each key's record on each node, in the order of {@code nodes}
 */
public record ReplicaStates(List<String> nodes, Map<String, List<ReplicaRecord>> records) {

    /** Reads every key on every replica. */
    public static ReplicaStates read(List<String> nodes, List<KvClient> replicas, List<String> keys) {
        Map<String, List<ReplicaRecord>> records = new LinkedHashMap<>();
        for (String key : keys) {
            List<ReplicaRecord> held = new ArrayList<>(replicas.size());
            for (KvClient replica : replicas) {
                held.add(replica.replicaRecord(key));
            }
            records.put(key, held);
        }
        return new ReplicaStates(List.copyOf(nodes), records);
    }

    /** One line per key whose replicas hold different records: which replica holds what. */
    public List<String> divergences() {
        List<String> divergences = new ArrayList<>();
        records.forEach((key, held) -> {
            if (held.stream().distinct().count() > 1) {
                StringBuilder line = new StringBuilder(key).append(':');
                for (int i = 0; i < held.size(); i++) {
                    line.append(' ').append(nodes.get(i)).append('=').append(held.get(i));
                }
                divergences.add(line.toString());
            }
        });
        return divergences;
    }

    /** How many keys {@code node} (an index in {@link #nodes}) holds in an older version than another replica, or not at all. */
    public long behindOn(int node) {
        return records.values().stream().filter(held -> {
            ReplicaRecord mine = held.get(node);
            return held.stream().anyMatch(other -> !other.absent() && (mine.absent() || newer(other.version(), mine.version())));
        }).count();
    }

    /**
     * Adds every replica's record of every key to {@code history} as a read that ended now, so the
     * history checker judges what the replicas hold as it judges client reads: no acknowledged
     * write lost, no deleted value back, no value that no PUT wrote.
     */
    public void recordAsReads(History history) {
        long now = history.now();
        records.forEach((key, held) -> {
            for (int i = 0; i < held.size(); i++) {
                ReplicaRecord record = held.get(i);
                history.record(new Operation(-1, i, Operation.Type.GET, key, record.liveValue().orElse(null), now, now,
                        Operation.Outcome.OK, "replica record on " + nodes.get(i) + ": " + record));
            }
        });
    }

    /** Versions are {@code <timestamp>.<node>}: by timestamp, then by node. */
    static boolean newer(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        int byTime = Long.compare(Long.parseLong(x[0]), Long.parseLong(y[0]));
        return byTime != 0 ? byTime > 0 : Integer.parseInt(x[1]) > Integer.parseInt(y[1]);
    }
}
