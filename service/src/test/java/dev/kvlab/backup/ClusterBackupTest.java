package dev.kvlab.backup;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.heal.Handoff;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.io.IOException;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import tools.jackson.databind.json.JsonMapper;

/**
 * Backups of a 3-node cluster, taken through the management port into a directory: every node's
 * part with checksums that match the stored bytes, every key written before holds, a second backup
 * sends only what changed, retention keeps the last two, and a node that is down fails the backup
 * with its name and leaves no complete backup. In order: each step builds on the backups before.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterBackupTest {

    static final String[] REPLICAS = {"1/1", "1/2", "2/3", "3/3", "1/3"};
    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path backups;
    static InProcessCluster cluster;
    static DirectoryTarget target;
    static final List<String> written = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws IOException {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "500ms", "kvlab.backup.target", backups.toString(),
                "kvlab.backup.keep-last", "2"));
        target = new DirectoryTarget(backups);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void aBackupHoldsEveryNodesPartAndEveryKeyWrittenBeforeIt() throws Exception {
        writeKeys("first", 150);
        for (int i = 0; i < 10; i++) {
            String key = written.get(i * 7);
            assertThat(cluster.client(i % 3).delete(key, "2/3").statusCode()).as("delete " + key).isBetween(200, 299);
        }

        // A checkpoint left by a part that did not end (the node stopped during it).
        Path crashed = storageDir(1).resolve(NodeSnapshots.CHECKPOINT_PREFIX + "crashed");
        Files.createDirectories(crashed);
        Files.writeString(crashed.resolve("000001.sst"), "left over");

        Map<String, Object> taken = backup(0, "{\"name\": \"b1\"}");

        assertThat(taken).containsEntry("backup", "b1").containsEntry("target", backups.toString());
        assertThat((List<?>) taken.get("nodes")).hasSize(3);
        assertThat((String) taken.get("guarantee")).contains("acknowledged before");
        ClusterManifest manifest = Manifests.read(target.read(BackupLayout.clusterManifest("b1")), ClusterManifest.class, "b1");
        assertThat(manifest.topology()).containsExactlyInAnyOrderElementsOf(cluster.nodeUrls());
        long keys = 0;
        long tombstones = 0;
        Set<String> inBackup = new HashSet<>();
        for (int index = 0; index < 3; index++) {
            NodeManifest node = nodeManifest("b1", index);
            assertThat(node.node()).isEqualTo(manifest.topology().get(index));
            assertThat(node.topology()).isEqualTo(manifest.topology());
            assertThat(node.cutMillis()).isEqualTo(manifest.cutMillis());
            assertThat(node.createdMillis()).isGreaterThanOrEqualTo(manifest.cutMillis());
            assertThat(node.files()).extracting(FileEntry::name).anyMatch(name -> name.endsWith(".sst")).contains("CURRENT");
            for (FileEntry file : node.files()) {
                byte[] blob = target.read(BackupLayout.blob(file.sha256()));
                assertThat(blob.length).as(file.name()).isEqualTo(file.bytes());
                assertThat(FileDigests.sha256(blob)).as(file.name()).isEqualTo(file.sha256());
            }
            keys += node.keys();
            tombstones += node.tombstones();
            inBackup.addAll(keysOf(node));
        }
        assertThat(inBackup).as("every key acknowledged before the backup, its value or tombstone").containsAll(written);
        assertThat(keys).as("records in all parts: each key on 1 to 3 nodes").isBetween((long) written.size(), 3L * written.size());
        assertThat(tombstones).isGreaterThanOrEqualTo(10);
        for (int i = 0; i < 3; i++) {
            assertThat(leftoverCheckpoints(i)).as("checkpoints deleted once stored, and those left over").isEmpty();
        }
    }

    @Test
    @Order(2)
    void aSecondBackupSendsOnlyTheFilesTheTargetLacks() throws Exception {
        Set<String> before = blobs();

        Map<String, Object> taken = backup(1, "{\"name\": \"b2\"}");

        long bytes = ((Number) taken.get("bytes")).longValue();
        long uploaded = ((Number) taken.get("uploadedBytes")).longValue();
        long newBytes = 0;
        for (int index = 0; index < 3; index++) {
            for (FileEntry file : nodeManifest("b2", index).files()) {
                if (!before.contains(file.sha256())) {
                    newBytes += file.bytes();
                }
            }
        }
        assertThat(uploaded).as("bytes sent: only files not stored before").isLessThanOrEqualTo(newBytes).isLessThan(bytes / 2);
    }

    @Test
    @Order(3)
    void retentionKeepsTheLastBackupsAndOnlyTheBlobsTheyOrABackupUnderWayUse() throws Exception {
        // Blobs stored long ago, and one stored just now, as by a backup under way whose manifests are not written yet.
        FileTime longAgo = FileTime.from(Instant.now().minusSeconds(7200));
        for (String blob : blobs()) {
            Files.setLastModifiedTime(backups.resolve(BackupLayout.blob(blob)), longAgo);
        }
        String underWay = FileDigests.sha256("a file of a backup under way".getBytes(StandardCharsets.UTF_8));
        target.put(BackupLayout.blob(underWay), "a file of a backup under way".getBytes(StandardCharsets.UTF_8));
        writeKeys("third", 30);

        backup(2, "{\"name\": \"b3\"}");

        assertThat(BackupCatalog.complete(target)).extracting(ClusterManifest::name).containsExactly("b3", "b2");
        assertThat(target.list(BackupLayout.backup("b1"))).as("the oldest backup's manifests").isEmpty();
        Set<String> used = new HashSet<>();
        for (String backup : List.of("b2", "b3")) {
            for (int index = 0; index < 3; index++) {
                nodeManifest(backup, index).files().forEach(file -> used.add(file.sha256()));
            }
        }
        used.add(underWay);
        assertThat(blobs()).as("blobs: those the backups kept use, and the one under way").isEqualTo(used);
    }

    @Test
    @Order(4)
    void statusListAndMetricsShowTheBackups() throws Exception {
        Map<String, Object> status = JSON.readValue(cluster.management(2).send("GET", "/actuator/kvlab", BodyPublishers.noBody()).body(), Map.class);
        Map<?, ?> backup = (Map<?, ?>) status.get("backup");
        assertThat(backup.get("target")).isEqualTo(backups.toString());
        assertThat(backup.get("running")).isNull();
        Map<?, ?> last = (Map<?, ?>) backup.get("last");
        assertThat(last.get("backup")).isEqualTo("b3");
        assertThat(last.get("outcome")).isEqualTo("ok");
        assertThat(last.get("where")).isEqualTo(backups.toString());
        assertThat(((Number) last.get("bytes")).longValue()).isPositive();
        assertThat(status).containsKeys("self", "nodes", "topology", "hints", "repair", "handoff");

        HttpResponse<byte[]> list = cluster.management(0).send("GET", "/actuator/kvlab/backups", BodyPublishers.noBody());
        assertThat(list.statusCode()).as(text(list)).isEqualTo(200);
        List<Map<String, Object>> listed = JSON.readValue(list.body(), List.class);
        assertThat(listed).extracting(entry -> entry.get("backup")).containsExactly("b3", "b2");
        assertThat(listed.getFirst()).containsEntry("nodes", 3).containsKeys("startedAt", "keys", "bytes");

        String page = text(cluster.management(1).send("GET", "/actuator/prometheus", BodyPublishers.noBody()));
        assertThat(metric(page, "kvlab_backup_last_success_timestamp_seconds")).isGreaterThan(Instant.now().getEpochSecond() - 600);
        assertThat(metric(page, "kvlab_backup_uploaded_bytes_total")).isPositive();
        assertThat(metric(page, "kvlab_backup_snapshot_bytes")).isPositive();
        assertThat(metric(page, "kvlab_backup_duration_seconds")).isPositive();
        assertThat(metric(page, "kvlab_backup_failures_total")).isZero();
    }

    @Test
    @Order(5)
    void aBackupNeedsTheCredentialAGoodNameAndTakesTurnsAndItsPeerCallsAreSigned() throws Exception {
        HttpResponse<byte[]> anonymous = cluster.management(0).send("POST", "/actuator/kvlab/backup", BodyPublishers.ofString("{}"),
                "Content-Type", "application/json");
        assertThat(anonymous.statusCode()).isEqualTo(401);

        HttpResponse<byte[]> badName = post(0, "{\"name\": \"../escape\"}");
        assertThat(badName.statusCode()).as(text(badName)).isEqualTo(400);
        assertThat(text(badName)).contains("\"error\"").contains("name");

        HttpResponse<byte[]> unnamed = post(1, "{}");
        assertThat(unnamed.statusCode()).as("a backup named by its time: " + text(unnamed)).isEqualTo(200);
        assertThat(text(unnamed)).containsPattern("\"backup\":\"kvlab-\\d{8}-\\d{6}\"");

        HttpResponse<byte[]> taken = post(0, "{\"name\": \"b3\"}");
        assertThat(taken.statusCode()).as("a name taken already: " + text(taken)).isEqualTo(409);
        assertThat(BackupCatalog.complete(target)).as("the backup of that name untouched").extracting(ClusterManifest::name).contains("b3");
        for (int index = 0; index < 3; index++) {
            assertThat(target.exists(BackupLayout.nodeManifest("b3", index))).isTrue();
        }

        // A backup under way: its first step waits on node 0's backup thread, held busy here.
        CountDownLatch busy = new CountDownLatch(1);
        cluster.bean(0, BackupThread.class).scheduler().schedule(() -> {
            try {
                busy.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<BackupCoordinator.Result> first = cluster.bean(0, BackupCoordinator.class).backup("b4").toFuture();
        HttpResponse<byte[]> second = post(0, "{}");
        busy.countDown();
        assertThat(second.statusCode()).as(text(second)).isEqualTo(409);
        assertThat(text(second)).contains("one at a time");
        assertThat(first.get(20, TimeUnit.SECONDS).manifest().name()).isEqualTo("b4");

        // A backup coordinated elsewhere holds node 2: one asked of node 0 now is refused, naming it, and holds nothing.
        Handoff elsewhere = cluster.bean(2, Handoff.class);
        assertThat(elsewhere.holdDeletions("elsewhere", System.currentTimeMillis() + 60_000)).isNull();
        HttpResponse<byte[]> third = post(0, "{\"name\": \"b5\"}");
        elsewhere.releaseDeletions("elsewhere");
        assertThat(third.statusCode()).as(text(third)).isEqualTo(409);
        assertThat(text(third)).contains(cluster.nodeUrls().get(2)).contains("in backup elsewhere");
        assertThat(cluster.bean(0, Handoff.class).deletionsHeldFor()).isNull();
        assertThat(target.exists(BackupLayout.clusterManifest("b5"))).isFalse();

        for (String path : List.of(BackupCalls.HOLD_PATH, BackupCalls.SNAPSHOT_PATH, BackupCalls.RELEASE_PATH)) {
            HttpResponse<byte[]> unsigned = new KvClient(cluster.url(1)).send("POST", path,
                    BodyPublishers.ofString("{\"backup\": \"x\", \"untilMillis\": 0}"), "Content-Type", "application/json");
            assertThat(unsigned.statusCode()).as(path).isEqualTo(401);
        }
    }

    @Test
    @Order(6)
    void aBackupWithANodeDownFailsNamingItAndLeavesNoBackup() throws Exception {
        cluster.stopNode(2);

        HttpResponse<byte[]> failed = post(0, "{\"name\": \"down\"}");

        assertThat(failed.statusCode()).as(text(failed)).isEqualTo(503);
        assertThat(text(failed)).contains(cluster.nodeUrls().get(2)).contains("\"error\"");
        assertThat(target.exists(BackupLayout.clusterManifest("down"))).isFalse();
        assertThat(target.list(BackupLayout.backup("down"))).isEmpty();
        for (int i = 0; i < 2; i++) {
            assertThat(cluster.bean(i, Handoff.class).deletionsHeldFor()).as("node " + i + "'s hold released").isNull();
        }
        Map<String, Object> status = JSON.readValue(cluster.management(0).send("GET", "/actuator/kvlab", BodyPublishers.noBody()).body(), Map.class);
        assertThat(((Map<?, ?>) status.get("backup")).get("running")).isNull();
        String page = text(cluster.management(0).send("GET", "/actuator/prometheus", BodyPublishers.noBody()));
        assertThat(metric(page, "kvlab_backup_failures_total")).isEqualTo(1);
    }

    private static void writeKeys(String prefix, int count) {
        byte[] value = new byte[2048];
        Arrays.fill(value, (byte) 'v');
        for (int i = 0; i < count; i++) {
            String key = prefix + "-" + i;
            String replicas = REPLICAS[i % REPLICAS.length];
            assertThat(cluster.client(i % 3).put(key, value, replicas).statusCode()).as(key + " at " + replicas).isEqualTo(201);
            written.add(key);
        }
    }

    private static HttpResponse<byte[]> post(int node, String body) {
        return cluster.management(node).send("POST", "/actuator/kvlab/backup", BodyPublishers.ofString(body),
                "Content-Type", "application/json", "Authorization", "Bearer " + cluster.secret());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> backup(int node, String body) {
        HttpResponse<byte[]> response = post(node, body);
        assertThat(response.statusCode()).as(text(response)).isEqualTo(200);
        return JSON.readValue(response.body(), Map.class);
    }

    private static NodeManifest nodeManifest(String backup, int index) throws IOException {
        return Manifests.read(target.read(BackupLayout.nodeManifest(backup, index)), NodeManifest.class, backup + "/" + index);
    }

    private static Set<String> blobs() throws IOException {
        return target.list(BackupLayout.BLOBS).stream().map(object -> object.key().substring(BackupLayout.BLOBS.length()))
                .collect(Collectors.toSet());
    }

    private static Path storageDir(int node) {
        return cluster.bean(node, dev.kvlab.storage.StorageProperties.class).dir().toAbsolutePath();
    }

    private static List<Path> leftoverCheckpoints(int node) throws IOException {
        try (var files = Files.list(storageDir(node))) {
            return files.filter(path -> path.getFileName().toString().startsWith(NodeSnapshots.CHECKPOINT_PREFIX)).toList();
        }
    }

    /** The keys of a node's part, read from its files as a restore would lay them out. */
    private static Set<String> keysOf(NodeManifest node) throws Exception {
        Path dir = Files.createTempDirectory("kvlab-restored-");
        for (FileEntry file : node.files()) {
            Files.write(dir.resolve(file.name()), target.read(BackupLayout.blob(file.sha256())));
        }
        Set<String> keys = new HashSet<>();
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (ColumnFamilyOptions family = new ColumnFamilyOptions().setMergeOperatorName("max"); DBOptions options = new DBOptions()) {
            RocksDB db = RocksDB.openReadOnly(options, dir.toString(), List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, family),
                    new ColumnFamilyDescriptor("records".getBytes(StandardCharsets.UTF_8), family)), handles);
            try (RocksIterator iterator = db.newIterator(handles.get(1))) {
                for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                    keys.add(new String(iterator.key(), StandardCharsets.UTF_8));
                }
            } finally {
                handles.forEach(ColumnFamilyHandle::close);
                db.close();
            }
        }
        return keys;
    }

    private static double metric(String page, String series) {
        return page.lines().filter(line -> line.startsWith(series + "{") || line.startsWith(series + " "))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no " + series + " in\n" + page));
    }
}
