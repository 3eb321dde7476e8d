package dev.kvlab.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.SequentialWriters.Write;
import dev.kvlab.it.fixture.DockerResources;
import dev.kvlab.it.fixture.DockerResources.Counts;
import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvClient.ReplicaRecord;
import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.fixture.OneShotContainer;
import dev.kvlab.it.fixture.Owners;
import dev.kvlab.it.fixture.S3Server;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A cluster's backup in a real S3-compatible server brings back every acknowledged write into a
 * cluster of another size, and a damaged backup is refused.
 *
 * <p>Three nodes back up to SeaweedFS ({@link S3Server}) while writers PUT and DELETE keys at
 * 1/1, 2/2, 2/3 and 3/3; the writers note when each write was sent and acknowledged, and the
 * backup's start is the moment its {@code POST} was sent. Then every container and volume of that
 * cluster is removed. Clusters of 2 and of 4 nodes are made from the backup alone: before a node
 * starts, {@code java -jar kvlab-service.jar restore} fills its empty volume, as an init container
 * would. Once handoff and repair have moved the records to their owners under the new node list,
 * each owner of each key (read on its own replica, no coordinator between) must hold the last
 * write acknowledged before the backup started, or a write sent after it. Last, one byte of one
 * file in the bucket is changed: the restore that needs it exits 4, names it, and writes nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BackupRestoreIT {

    private static final Logger log = LoggerFactory.getLogger(BackupRestoreIT.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String[] REPLICAS = {"1/1", "2/2", "2/3", "3/3"};
    private static final int KEYS = 240;
    private static final String RUN = Long.toHexString(System.nanoTime() & 0xffffffL);
    /** The backups' place in the bucket: a run's own. */
    private static final String PREFIX = "it-" + RUN;
    private static final String BACKUP = "it-backup-" + RUN;
    private static final Duration BACKUP_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration RESTORE_TIMEOUT = Duration.ofMinutes(2);
    /** How long handoff and repair get to put every record on its owners under the new node list. */
    private static final Duration SETTLING = Duration.ofSeconds(90);

    private static final List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "backed-up-" + RUN + "-" + i).toList();
    private static S3Server s3;
    /** Each key acknowledged before the backup started: the writes one of which its owners must hold. */
    private static final Map<String, List<Write>> allowed = new LinkedHashMap<>();

    @BeforeAll
    static void backUpAThreeNodeClusterUnderWrites() throws Exception {
        s3 = new S3Server();
        s3.start();
        String clusterId;
        try (KvlabCluster cluster = withBackupTarget(KvlabCluster.ofSize(3))
                .beforeNodesStart(c -> s3.connect(c.networkName()))) {
            cluster.start();
            clusterId = cluster.id();
            SequentialWriters writers = new SequentialWriters(keys, BackupRestoreIT::replicas, i -> cluster.client(i % 3), 6, 20_000, 20);
            long cut;
            long done;
            JsonNode answer;
            try (writers) {
                writers.start();
                writers.awaitAcknowledged(KEYS / 10, Duration.ofSeconds(60));
                Thread.sleep(Duration.ofSeconds(1));
                cut = System.nanoTime();
                var response = cluster.management(1).withTimeout(BACKUP_TIMEOUT)
                        .postJson("/actuator/kvlab/backup", "{\"name\": \"" + BACKUP + "\"}", cluster.secret());
                done = System.nanoTime();
                assertThat(response.statusCode()).as("POST /actuator/kvlab/backup: %s", KvClient.text(response)).isEqualTo(200);
                answer = JSON.readTree(response.body());
                Thread.sleep(Duration.ofSeconds(1));
            }
            log.info("backup: {}", answer);
            assertThat(answer.path("backup").asString()).isEqualTo(BACKUP);
            assertThat(answer.path("nodes")).as("the backup's nodes").hasSize(3);
            assertThat(writers.acknowledgedBetween(cut, done)).as("writes acknowledged while the backup ran").isPositive();

            for (String key : keys) {
                List<Write> writes = writers.allowedAfterBackup(key, cut);
                if (!writes.isEmpty()) {
                    allowed.put(key, writes);
                }
            }
            long deletes = allowed.values().stream().filter(w -> w.getFirst().delete()).count();
            log.info("{} writes, {} acknowledged before the backup started, {} while it ran; {} keys to find again, {} of them deleted",
                    writers.writes().values().stream().mapToInt(List::size).sum(), writers.acknowledgedBetween(0, cut),
                    writers.acknowledgedBetween(cut, done), allowed.size(), deletes);
            assertThat(allowed).as("keys acknowledged before the backup started").hasSize(KEYS);
            assertThat(deletes).as("keys whose last acknowledged write before the backup is a DELETE").isPositive();
        }
        assertThat(DockerResources.countLabelled(DockerResources.CLUSTER_LABEL, clusterId))
                .as("containers, networks and volumes left of the backed-up cluster").isEqualTo(new Counts(0, 0, 0));
    }

    @AfterAll
    static void stopTheS3Server() {
        if (s3 != null) {
            s3.stop();
        }
    }

    @Test
    @Order(1)
    void aClusterOfTwoRestoredFromTheBackupHoldsEveryWriteAcknowledgedBeforeIt() throws InterruptedException {
        restoreAndCheck(2);
    }

    @Test
    @Order(2)
    void aClusterOfFourRestoredFromTheBackupHoldsEveryWriteAcknowledgedBeforeIt() throws InterruptedException {
        restoreAndCheck(4);
    }

    @Test
    @Order(3)
    void aBackupWithOneByteChangedIsRefusedAndTheVolumeStaysEmpty() {
        String file;
        try (S3Client client = s3.client()) {
            List<S3Object> objects = client.listObjectsV2Paginator(request -> request.bucket(S3Server.BUCKET).prefix(PREFIX + "/"))
                    .contents().stream().toList();
            String manifestKey = keyEndingWith(objects, "backups/" + BACKUP + "/nodes/0.json");
            JsonNode manifest = JSON.readTree(client.getObjectAsBytes(request -> request.bucket(S3Server.BUCKET).key(manifestKey)).asByteArray());
            // The largest table file: records, not bookkeeping.
            JsonNode victim = StreamSupport.stream(manifest.path("files").spliterator(), false)
                    .filter(f -> f.path("name").asString().endsWith(".sst"))
                    .max(Comparator.comparingLong(f -> f.path("bytes").asLong()))
                    .orElseThrow(() -> new AssertionError("node 0's part of the backup has no table file: " + manifest));
            file = victim.path("name").asString();
            String blobKey = keyEndingWith(objects, "blobs/" + victim.path("sha256").asString());
            byte[] bytes = client.getObjectAsBytes(request -> request.bucket(S3Server.BUCKET).key(blobKey)).asByteArray();
            bytes[bytes.length / 2] ^= 0x01;
            client.putObject(request -> request.bucket(S3Server.BUCKET).key(blobKey), RequestBody.fromBytes(bytes));
            log.info("changed one byte of {} ({} bytes), node 0's {}", blobKey, bytes.length, file);
        }

        String owner = "corrupt-" + RUN;
        String volume = "kvlab-it-" + owner + "-data";
        DockerResources.docker().createVolumeCmd().withName(volume).withLabels(DockerResources.labels(owner)).exec();
        try {
            OneShotContainer.Result restore = restoreCommand(owner, 0, 3, s3.networkName(), volume).run(RESTORE_TIMEOUT);
            log.info("restore of a damaged backup exited {}:\n{}", restore.exitCode(), restore.output());
            assertThat(restore.exitCode()).as("restore's exit code; it printed:\n%s", restore.output()).isEqualTo(4);
            assertThat(restore.output()).as("restore's message").contains(BACKUP).contains(file);

            OneShotContainer.Result listing = new OneShotContainer("list", owner).withVolume(volume, "/data").withShell("ls -A /data")
                    .run(Duration.ofSeconds(60));
            assertThat(listing.exitCode()).isZero();
            assertThat(listing.output()).as("what the refused restore left in the volume").isBlank();
        } finally {
            DockerResources.removeLabelled(DockerResources.CLUSTER_LABEL, owner);
        }
    }

    /**
     * A new cluster of {@code size} nodes, each node's volume restored from the backup before it
     * starts; then each owner of each key must come to hold a write it may hold.
     */
    private static void restoreAndCheck(int size) throws InterruptedException {
        try (KvlabCluster cluster = withBackupTarget(KvlabCluster.ofSize(size)).beforeNodesStart(c -> {
            s3.connect(c.networkName());
            // Every node's restore at once, as the init containers of a StatefulSet's pods run.
            List<OneShotContainer.Result> restores;
            try (ExecutorService threads = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().name("restore-", 0).factory())) {
                restores = IntStream.range(0, size)
                        .mapToObj(i -> CompletableFuture.supplyAsync(
                                () -> restoreCommand(c.id(), i, size, c.networkName(), c.volume(i)).run(RESTORE_TIMEOUT), threads))
                        .toList().stream().map(CompletableFuture::join).toList();
            }
            for (int i = 0; i < size; i++) {
                OneShotContainer.Result restore = restores.get(i);
                log.info("restore of node {} of {} exited {}:\n{}", i, size, restore.exitCode(), restore.output().strip());
                assertThat(restore.exitCode()).as("restore of node %d of %d; it printed:\n%s", i, size, restore.output()).isZero();
            }
        })) {
            cluster.start();
            awaitEveryKeyOnItsOwners(cluster);
        }
    }

    /**
     * Asks every node for a repair round and reads each owner's record of each key until all hold
     * an allowed write, the same one; fails after {@link #SETTLING} with what is still wrong.
     */
    private static void awaitEveryKeyOnItsOwners(KvlabCluster cluster) throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + SETTLING.toNanos();
        List<String> wrong;
        while (true) {
            for (int node = 0; node < cluster.size(); node++) {
                var repair = cluster.management(node).postJson("/actuator/kvlab/repair", "{}", cluster.secret());
                assertThat(repair.statusCode()).as("POST /actuator/kvlab/repair: %s", KvClient.text(repair)).isEqualTo(200);
            }
            wrong = misplaced(cluster);
            if (wrong.isEmpty() || System.nanoTime() > deadline) {
                break;
            }
            log.info("{} keys not yet on their owners: {}", wrong.size(), wrong.subList(0, Math.min(3, wrong.size())));
            Thread.sleep(Duration.ofSeconds(2));
        }
        assertThat(wrong).as("keys acknowledged before the backup whose owners in a cluster of %d do not hold them %s after its start",
                cluster.size(), SETTLING).isEmpty();
        log.info("cluster of {}: all {} keys on their owners {} ms after the start; {}", cluster.size(), allowed.size(),
                (System.nanoTime() - started) / 1_000_000, laterWritesHeld(cluster));
    }

    /** Each key whose owners do not all hold the same allowed write, with what each holds. */
    private static List<String> misplaced(KvlabCluster cluster) {
        List<String> urls = cluster.urls();
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            String key = keys.get(i);
            List<Write> writes = allowed.get(key);
            if (writes == null) {
                continue;
            }
            Map<String, ReplicaRecord> held = new LinkedHashMap<>();
            for (String owner : Owners.of(key, from(i), urls)) {
                held.put(owner, cluster.replica(urls.indexOf(owner)).replicaRecord(key));
            }
            Set<String> versions = new HashSet<>();
            boolean allAllowed = true;
            for (ReplicaRecord record : held.values()) {
                versions.add(record.version());
                allAllowed &= writes.stream().anyMatch(w -> w.heldBy(record));
            }
            if (!allAllowed || versions.size() != 1) {
                wrong.add(key + " at " + replicas(i) + ": owners hold " + held + "; allowed: " + writes.getFirst()
                        + (writes.size() > 1 ? " or one of the " + (writes.size() - 1) + " writes sent after it" : ""));
            }
        }
        return wrong;
    }

    /** How many keys' owners hold a write sent after the last one acknowledged before the backup: allowed, counted. */
    private static String laterWritesHeld(KvlabCluster cluster) {
        List<String> urls = cluster.urls();
        int later = 0;
        for (int i = 0; i < KEYS; i++) {
            List<Write> writes = allowed.get(keys.get(i));
            if (writes != null && writes.size() > 1) {
                ReplicaRecord record = cluster.replica(urls.indexOf(Owners.of(keys.get(i), 1, urls).getFirst())).replicaRecord(keys.get(i));
                later += writes.getFirst().heldBy(record) ? 0 : 1;
            }
        }
        return later + " keys hold a write sent after their last one acknowledged before the backup";
    }

    private static OneShotContainer restoreCommand(String owner, int index, int size, String network, String volume) {
        return new OneShotContainer("restore-" + index, owner)
                .withNetwork(network)
                .withVolume(volume, "/data")
                .withEnv("KVLAB_BACKUP_TARGET", "s3://" + S3Server.BUCKET + "/" + PREFIX)
                .withEnv("KVLAB_BACKUP_S3_ENDPOINT", s3.endpointOnNetwork())
                .withEnv("KVLAB_BACKUP_S3_REGION", S3Server.REGION)
                .withEnv("KVLAB_BACKUP_S3_ACCESSKEY", s3.accessKey())
                .withEnv("KVLAB_BACKUP_S3_SECRETKEY", s3.secretKey())
                .withArguments("restore", "--backup=" + BACKUP, "--data=/data", "--nodes=" + size, "--index=" + index);
    }

    /** Records move 1 s after a change; repair and handoff sweep every 5 s; backups to the S3 server. */
    private static KvlabCluster withBackupTarget(KvlabCluster cluster) {
        return cluster
                .withSetting("kvlab.replication.timeout", "2s")
                .withSetting("kvlab.heal.hints.replay-interval", "1s")
                .withSetting("kvlab.heal.repair.interval", "5s")
                .withSetting("kvlab.heal.handoff.settle", "1s")
                .withSetting("kvlab.heal.handoff.interval", "5s")
                .withSetting("kvlab.backup.target", "s3://" + S3Server.BUCKET + "/" + PREFIX)
                .withSetting("kvlab.backup.s3.endpoint", s3.endpointOnNetwork())
                .withSetting("kvlab.backup.s3.region", S3Server.REGION)
                .withSetting("kvlab.backup.s3.access-key", s3.accessKey())
                .withSetting("kvlab.backup.s3.secret-key", s3.secretKey());
    }

    private static String keyEndingWith(List<S3Object> objects, String suffix) {
        return objects.stream().map(S3Object::key).filter(key -> key.endsWith("/" + suffix)).findFirst()
                .orElseThrow(() -> new AssertionError("no object ending in " + suffix + " under " + PREFIX + "/: "
                        + objects.stream().map(S3Object::key).limit(20).toList()));
    }

    static String replicas(int i) {
        return REPLICAS[i % REPLICAS.length];
    }

    static int from(int i) {
        return Integer.parseInt(replicas(i).substring(2));
    }
}
