package dev.kvlab.it;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvClient.ReplicaRecord;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Concurrent writers that PUT and DELETE a fixed set of keys, each key at its own {@code ack/from}
 * and always through the same node, one operation at a time per key (each key belongs to one
 * writer thread): a key's writes are ordered, each gets a later version than the one before it
 * from the same coordinator's clock, and every PUT writes a value never written before, so a
 * record read later names the write it came from. Every write is kept with the client-side time
 * it was sent and the time its answer came, to tell which were acknowledged before a moment.
 *
 * <p>Bounded: each writer stops after {@code maxWrites} or at {@link #close()}. A write that got
 * no answer at all (a client timeout) may still be applied later, after a write sent after it:
 * its key gets no further writes, so it stays the key's last.
 */
final class SequentialWriters implements AutoCloseable {

    /** One PUT ({@code value} set) or DELETE ({@code value} null), as sent and as answered. */
    record Write(String key, String value, long sentNanos, long answeredNanos, boolean acknowledged, String answer) {

        boolean delete() {
            return value == null;
        }

        /** Whether a replica's record is this write's: its value, or a tombstone for a DELETE. */
        boolean heldBy(ReplicaRecord record) {
            if (record.absent()) {
                return false;
            }
            return delete() ? record.tombstone() : !record.tombstone() && value.equals(record.value());
        }

        @Override
        public String toString() {
            return (delete() ? "DELETE" : "PUT " + value) + (acknowledged ? " acknowledged" : " " + answer);
        }
    }

    private final List<String> keys;
    private final IntFunction<String> replicasOfKey;
    private final IntFunction<KvClient> coordinatorOfKey;
    private final int threads;
    private final int maxWrites;
    private final int deletePercent;
    private final Map<String, List<Write>> writes = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean();
    /** The keys with at least one acknowledged write, and the acknowledged DELETEs: to watch while they run. */
    private final Set<String> acknowledgedKeys = ConcurrentHashMap.newKeySet();
    private final AtomicLong acknowledgedDeletes = new AtomicLong();
    private final List<Thread> writers = new ArrayList<>();

    /**
     * @param keys             the keys, key {@code i} written at {@code replicasOfKey(i)} through {@code coordinatorOfKey(i)}
     * @param threads          writers; writer {@code t} owns the keys {@code i} with {@code i % threads == t}
     * @param maxWrites        writes per writer at the most
     * @param deletePercent    the share of DELETEs after a key's first write (always a PUT)
     */
    SequentialWriters(List<String> keys, IntFunction<String> replicasOfKey, IntFunction<KvClient> coordinatorOfKey, int threads,
                      int maxWrites, int deletePercent) {
        this.keys = List.copyOf(keys);
        this.replicasOfKey = replicasOfKey;
        this.coordinatorOfKey = coordinatorOfKey;
        this.threads = threads;
        this.maxWrites = maxWrites;
        this.deletePercent = deletePercent;
        for (String key : keys) {
            writes.put(key, new ArrayList<>());
        }
    }

    SequentialWriters start() {
        running.set(true);
        for (int t = 0; t < threads; t++) {
            int writer = t;
            writers.add(Thread.ofPlatform().name("writer-" + t).start(() -> run(writer)));
        }
        return this;
    }

    /** Stops the writers and waits for their last writes. */
    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread writer : writers) {
            writer.join(Duration.ofSeconds(30));
        }
    }

    /**
     * Waits until every key has an acknowledged write and {@code deletes} DELETEs were acknowledged,
     * as the writers run; fails after {@code timeout}.
     */
    void awaitAcknowledged(int deletes, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (acknowledgedKeys.size() < keys.size() || acknowledgedDeletes.get() < deletes) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("after " + timeout + ", " + acknowledgedKeys.size() + " of " + keys.size()
                        + " keys have an acknowledged write and " + acknowledgedDeletes.get() + " of " + deletes + " DELETEs were acknowledged");
            }
            Thread.sleep(100);
        }
    }

    /** Each key's writes in the order they were sent. After {@link #close()}. */
    Map<String, List<Write>> writes() {
        return writes;
    }

    /** How many writes were acknowledged within [{@code fromNanos}, {@code toNanos}) of their answer. */
    long acknowledgedBetween(long fromNanos, long toNanos) {
        return writes.values().stream().flatMap(List::stream)
                .filter(w -> w.acknowledged() && w.answeredNanos() >= fromNanos && w.answeredNanos() < toNanos)
                .count();
    }

    /**
     * What a backup that started at {@code cutNanos} must hold of {@code key}: the last write
     * acknowledged before then, or a later one of the key (sent after it, so with a later version,
     * which the backup may hold as well); empty when no write of the key was acknowledged before.
     */
    List<Write> allowedAfterBackup(String key, long cutNanos) {
        List<Write> ofKey = writes.get(key);
        int last = -1;
        for (int i = 0; i < ofKey.size(); i++) {
            if (ofKey.get(i).acknowledged() && ofKey.get(i).answeredNanos() < cutNanos) {
                last = i;
            }
        }
        return last < 0 ? List.of() : List.copyOf(ofKey.subList(last, ofKey.size()));
    }

    private void run(int writer) {
        List<Integer> mine = new ArrayList<>();
        for (int i = writer; i < keys.size(); i += threads) {
            mine.add(i);
        }
        Set<Integer> unanswered = new HashSet<>();
        Random random = new Random(writer);
        for (int n = 0; n < maxWrites && running.get() && unanswered.size() < mine.size(); n++) {
            // Every key once in order first, then at random.
            int i = n < mine.size() ? mine.get(n) : mine.get(random.nextInt(mine.size()));
            if (unanswered.contains(i)) {
                continue;
            }
            String key = keys.get(i);
            List<Write> ofKey = writes.get(key);
            boolean delete = !ofKey.isEmpty() && random.nextInt(100) < deletePercent;
            String value = delete ? null : key + "#" + ofKey.size();
            Write write = send(coordinatorOfKey.apply(i), key, value, replicasOfKey.apply(i));
            ofKey.add(write);
            if (write.acknowledged()) {
                acknowledgedKeys.add(key);
                if (write.delete()) {
                    acknowledgedDeletes.incrementAndGet();
                }
            }
            if (write.answer().startsWith("no answer")) {
                unanswered.add(i);
            }
        }
    }

    private static Write send(KvClient coordinator, String key, String value, String replicas) {
        long sent = System.nanoTime();
        try {
            HttpResponse<byte[]> response = value == null ? coordinator.delete(key, replicas) : coordinator.put(key, value, replicas);
            int status = response.statusCode();
            boolean acknowledged = value == null ? status == 202 : status == 201;
            return new Write(key, value, sent, System.nanoTime(), acknowledged, Integer.toString(status));
        } catch (RuntimeException e) {
            return new Write(key, value, sent, System.nanoTime(), false, "no answer: " + e);
        }
    }
}
