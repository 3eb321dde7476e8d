package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.cluster.Topology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/** The coordinator's answers when a node does not answer in time or refuses: which node, why, and no backup written. */
class BackupCoordinatorTest {

    static final List<String> NODES = List.of("http://a:1", "http://b:1", "http://c:1");

    @TempDir
    Path dir;
    final BackupThread thread = new BackupThread();
    final Set<String> released = ConcurrentHashMap.newKeySet();

    @AfterEach
    void stop() {
        thread.close();
    }

    /** A node whose snapshot answers {@code answer}, recording its release. */
    BackupNode node(String name, Function<BackupCalls.Snapshot, Mono<NodeManifest>> answer) {
        return new BackupNode() {
            @Override
            public Mono<Void> hold(BackupCalls.Hold hold) {
                return Mono.empty();
            }

            @Override
            public Mono<NodeManifest> snapshot(BackupCalls.Snapshot snapshot) {
                return answer.apply(snapshot);
            }

            @Override
            public Mono<Void> release(BackupCalls.Release release) {
                return Mono.fromRunnable(() -> released.add(name));
            }
        };
    }

    BackupCoordinator coordinator(DirectoryTarget target, Map<String, BackupNode> nodes, BackupStatus status) {
        return coordinator(target, nodes, status, Duration.ofMillis(300));
    }

    BackupCoordinator coordinator(DirectoryTarget target, Map<String, BackupNode> nodes, BackupStatus status, Duration timeout) {
        return new BackupCoordinator(new ConfiguredTarget(target), () -> new Topology(NODES, NODES.get(0)), nodes::get, thread, status,
                new Retention(7, Duration.ZERO, Duration.ofHours(1)), System::currentTimeMillis, timeout, Duration.ofMillis(300), "test");
    }

    static NodeManifest part(BackupCalls.Snapshot asked) {
        return new NodeManifest(NodeManifest.FORMAT, asked.backup(), asked.index(), asked.topology().get(asked.index()), asked.topology(),
                asked.cutMillis(), asked.cutMillis(), 0, "test", 0, 0, null, null, 0, 0, List.of());
    }

    @Test
    void aNodeThatDoesNotAnswerItsPartInTimeFailsTheBackupNamedAndEveryHoldIsReleased() {
        DirectoryTarget target = new DirectoryTarget(dir);
        BackupStatus status = new BackupStatus();
        Map<String, BackupNode> nodes = Map.of(
                NODES.get(0), node(NODES.get(0), asked -> Mono.just(part(asked))),
                NODES.get(1), node(NODES.get(1), asked -> Mono.never()),
                NODES.get(2), node(NODES.get(2), asked -> Mono.just(part(asked))));

        assertThatThrownBy(() -> coordinator(target, nodes, status).backup("slow").block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(BackupFailure.class, failure -> assertThat(failure.status()).isEqualTo(503))
                .hasMessageContaining("node 1 (http://b:1)").hasMessageContaining("take its part").hasMessageContaining("PT0.3S");

        assertThat(target.exists(BackupLayout.clusterManifest("slow"))).isFalse();
        assertThat(released).containsExactlyInAnyOrderElementsOf(NODES);
        assertThat(status.failures()).isEqualTo(1);
        assertThat(status.running()).isNull();
    }

    /**
     * A release that overtakes a hold still on its way would leave that hold on its node until its
     * deadline: the coordinator releases only once every hold has answered, though one failed first.
     */
    @Test
    void aHoldThatFailsAtOnceIsReleasedOnlyAfterTheHoldsStillOnTheirWayAnswered() {
        DirectoryTarget target = new DirectoryTarget(dir);
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        Function<String, BackupNode> holding = name -> new BackupNode() {
            @Override
            public Mono<Void> hold(BackupCalls.Hold hold) {
                return switch (name) {
                    case "http://b:1" -> Mono.error(new IllegalStateException("connection refused"));
                    case "http://c:1" -> Mono.delay(Duration.ofMillis(100)).then(Mono.fromRunnable(() -> events.add("held " + name)));
                    default -> Mono.fromRunnable(() -> events.add("held " + name));
                };
            }

            @Override
            public Mono<NodeManifest> snapshot(BackupCalls.Snapshot snapshot) {
                return Mono.just(part(snapshot));
            }

            @Override
            public Mono<Void> release(BackupCalls.Release release) {
                return Mono.fromRunnable(() -> events.add("released " + name));
            }
        };
        Map<String, BackupNode> nodes = Map.of(NODES.get(0), holding.apply(NODES.get(0)), NODES.get(1), holding.apply(NODES.get(1)),
                NODES.get(2), holding.apply(NODES.get(2)));

        assertThatThrownBy(() -> coordinator(target, nodes, new BackupStatus()).backup("refused").block(Duration.ofSeconds(10)))
                .hasMessageContaining("node 1 (http://b:1)").hasMessageContaining("connection refused");

        assertThat(events).contains("held http://c:1", "released http://c:1");
        assertThat(events.indexOf("held http://c:1")).as("%s", events).isLessThan(events.indexOf("released http://c:1"));
    }

    /** A part that another node stores after one node failed is discarded with the rest, not left for retention. */
    @Test
    void aPartThatFailsDiscardsThePartsStoredAfterIt() throws Exception {
        DirectoryTarget target = new DirectoryTarget(dir);
        BackupNode failing = node(NODES.get(1), asked -> Mono.delay(Duration.ofMillis(20)).then(Mono.error(new IllegalStateException("disk full"))));
        // Like a peer's part, it goes on when the coordinator stops waiting for it.
        CompletableFuture<NodeManifest> stored = new CompletableFuture<>();
        BackupNode storing = node(NODES.get(2), asked -> Mono.fromFuture(CompletableFuture.supplyAsync(() -> {
            NodeManifest manifest = part(asked);
            try {
                target.put(BackupLayout.nodeManifest(asked.backup(), asked.index()), Manifests.write(manifest));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return manifest;
        }, CompletableFuture.delayedExecutor(150, TimeUnit.MILLISECONDS)).whenComplete((manifest, error) -> stored.complete(manifest)), true));
        BackupNode good = node(NODES.get(0), asked -> Mono.just(part(asked)));

        assertThatThrownBy(() -> coordinator(target, Map.of(NODES.get(0), good, NODES.get(1), failing, NODES.get(2), storing),
                new BackupStatus(), Duration.ofSeconds(10)).backup("late").block(Duration.ofSeconds(20)))
                .hasMessageContaining("node 1 (http://b:1)").hasMessageContaining("disk full");

        assertThat(stored.get(5, TimeUnit.SECONDS)).as("node 2 stored its part").isNotNull();
        assertThat(target.list(BackupLayout.backup("late"))).isEmpty();
    }

    @Test
    void aNodeThatAnswersNoManifestOrAnotherFailsTheBackup() throws Exception {
        DirectoryTarget target = new DirectoryTarget(dir);
        BackupNode none = node(NODES.get(1), asked -> Mono.empty());
        BackupNode other = node(NODES.get(2), asked -> Mono.just(part(new BackupCalls.Snapshot("other", 0, NODES, 2))));
        BackupNode good = node(NODES.get(0), asked -> Mono.just(part(asked)));

        assertThatThrownBy(() -> coordinator(target, Map.of(NODES.get(0), good, NODES.get(1), none, NODES.get(2), good), new BackupStatus())
                .backup("empty").block(Duration.ofSeconds(10))).hasMessageContaining("node 1 (http://b:1)").hasMessageContaining("no manifest");
        assertThatThrownBy(() -> coordinator(target, Map.of(NODES.get(0), good, NODES.get(1), good, NODES.get(2), other), new BackupStatus())
                .backup("mixed").block(Duration.ofSeconds(10))).hasMessageContaining("node 2 (http://c:1)").hasMessageContaining("backup other");
        assertThat(new BackupCatalog(target).complete()).isEmpty();
    }

    @Test
    void everyNodesPartAnsweredMakesTheBackupComplete() throws Exception {
        DirectoryTarget target = new DirectoryTarget(dir);
        BackupNode answering = new BackupNode() {
            @Override
            public Mono<Void> hold(BackupCalls.Hold hold) {
                return Mono.empty();
            }

            @Override
            public Mono<NodeManifest> snapshot(BackupCalls.Snapshot snapshot) {
                return Mono.fromSupplier(() -> part(snapshot));
            }

            @Override
            public Mono<Void> release(BackupCalls.Release release) {
                return Mono.empty();
            }
        };

        BackupCoordinator.Result result = coordinator(target, Map.of(NODES.get(0), answering, NODES.get(1), answering, NODES.get(2), answering),
                new BackupStatus()).backup(null).block(Duration.ofSeconds(10));

        assertThat(result.manifest().name()).matches("kvlab-\\d{8}-\\d{6}");
        assertThat(result.manifest().nodes()).extracting(ClusterManifest.Part::index).containsExactly(0, 1, 2);
        assertThat(new BackupCatalog(target).complete()).extracting(ClusterManifest::name).containsExactly(result.manifest().name());
    }

    @Test
    void noTargetIs503SayingWhichProperty() {
        BackupCoordinator coordinator = new BackupCoordinator(new ConfiguredTarget((BackupTarget) null), () -> new Topology(NODES, NODES.get(0)),
                node -> null, thread, new BackupStatus(), new Retention(7, Duration.ZERO, Duration.ofHours(1)), System::currentTimeMillis,
                Duration.ofSeconds(1), Duration.ofSeconds(1), "test");

        assertThatThrownBy(() -> coordinator.backup(null).block())
                .isInstanceOfSatisfying(BackupFailure.class, failure -> assertThat(failure.status()).isEqualTo(503))
                .hasMessageContaining("kvlab.backup.target");
    }
}
