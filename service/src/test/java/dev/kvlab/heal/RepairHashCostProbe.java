package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StorageProperties;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import dev.kvlab.memory.MemoryBudget;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.util.unit.DataSize;

/**
 * What one side of a repair round where nothing differs costs in CPU over a store of KEYS keys
 * (three nodes, every key at 3/3, so every record is shared with the peer): the bucket hashes by a
 * full scan of the headers (what every round did before the hashes were kept), built once, then
 * brought up to date with nothing changed, and with CHANGED keys written since. Not a test: run it
 * by hand, scans unpaced, on a store it fills once in DIR (kept for the next run):
 *
 * <pre>
 * ./mvnw -q -pl service test-compile
 * java -cp service/target/test-classes:service/target/classes:$(cat cp.txt) dev.kvlab.heal.RepairHashCostProbe DIR [KEYS] [CHANGED]
 * </pre>
 */
public final class RepairHashCostProbe {

    private static final List<String> NODES = List.of("a", "b", "c");
    private static final int BUCKETS = 1024;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int keys = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        int changed = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
        boolean fill = !Files.exists(dir);
        try (LocalStore store = LocalStore.open(new StorageProperties(dir, DataSize.ofMegabytes(64), DataSize.ofMegabytes(32), 3, false, 2,
                4096, true, StorageProperties.ReadBatch.DEFAULTS))) {
            if (fill) {
                fill(store, keys);
            }
            HeaderScan scan = new HeaderScan(store, Integer.MAX_VALUE);
            Ownership ownership = new Ownership(NODES);
            for (int run = 0; run < 3; run++) {
                measure("full scan (every round before)", () -> RepairRound.bucketHashes(ownership, "a", "b", scan.all(), BUCKETS)
                        .block(Duration.ofMinutes(10)));
            }
            MaintainedBucketHashes hashes = new MaintainedBucketHashes(store, scan, 64 << 20);
            MaintainedBucketHashes.Basis basis = new MaintainedBucketHashes.Basis(NODES, "a", BUCKETS);
            measure("hashes built (once, at start)", () -> hashes.hashes(basis, "b").block(Duration.ofMinutes(10)));
            for (int run = 0; run < 3; run++) {
                measure("kept hashes, nothing changed", () -> hashes.hashes(basis, "b").block(Duration.ofMinutes(10)));
            }
            hashes.close();
            // Every changed key read again, however many there are (above 1/20 of the keys, the node scans instead).
            MaintainedBucketHashes rereading = new MaintainedBucketHashes(store, scan, 256 << 20, 0);
            rereading.hashes(basis, "b").block(Duration.ofMinutes(10));
            for (int run = 0; run < 5; run++) {
                int count = run < 3 ? changed : changed * 10;
                write(store, count, keys, run);
                measure("kept hashes, " + count + " keys changed", () -> rereading.hashes(basis, "b").block(Duration.ofMinutes(10)));
            }
            rereading.close();
        }
    }

    private static void measure(String what, Runnable work) {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu = os.getProcessCpuTime();
        long wall = System.nanoTime();
        work.run();
        System.out.printf("%-40s cpu %8.1f ms  wall %8.1f ms%n", what, (os.getProcessCpuTime() - cpu) / 1e6, (System.nanoTime() - wall) / 1e6);
    }

    private static void fill(LocalStore store, int keys) {
        for (int start = 0; start < keys; start += 1000) {
            List<StoreOp> batch = new ArrayList<>(1000);
            for (int i = start; i < Math.min(keys, start + 1000); i++) {
                batch.add(new StoreOp.Write(key(i), value(i, 1)));
            }
            store.batch(batch, new MemoryBudget(Long.MAX_VALUE).lease()).block(Duration.ofMinutes(1));
        }
    }

    private static void write(LocalStore store, int count, int keys, int run) {
        for (int start = 0; start < count; start += 1000) {
            List<StoreOp> batch = new ArrayList<>(1000);
            for (int i = start; i < Math.min(count, start + 1000); i++) {
                batch.add(new StoreOp.Write(key((int) ((i * 7919L + run * 104729L) % keys)), value(2_000_000 + run * count + i, 1)));
            }
            store.batch(batch, new MemoryBudget(Long.MAX_VALUE).lease()).block(Duration.ofMinutes(1));
        }
    }

    private static byte[] key(int i) {
        return String.format("key-%09d", i).getBytes(StandardCharsets.UTF_8);
    }

    private static Record value(long timestamp, int node) {
        byte[] array = Record.newValueArray(100);
        return Record.value(new Version(timestamp, node), 3, array);
    }
}
