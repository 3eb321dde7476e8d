package dev.kvlab.backup;

import dev.kvlab.cluster.Topology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Takes a backup of the whole cluster, from whichever node is asked. At the cut {@code T} (now):
 * <ol>
 *   <li>every node of the topology holds its deletions of records handed to their new owners, so a
 *       record moving during the backup is in one snapshot at least;</li>
 *   <li>every node takes its part, a checkpoint after {@code T}, and answers its manifest; a node
 *       that does not fails the whole backup, named with why, once every other node has answered
 *       (and what they stored is discarded);</li>
 *   <li>the backup's manifest is written, last, which makes the backup complete; retention removes
 *       backups no longer kept; the holds are released.</li>
 * </ol>
 * Every write acknowledged before {@code T} was stored by one replica at least before {@code T},
 * and that replica's checkpoint comes after {@code T}: the backup holds it. One backup at a time
 * per node (409 otherwise); the holds also keep two coordinators from backing up at once.
 */
public final class BackupCoordinator {

    private static final Logger log = LoggerFactory.getLogger(BackupCoordinator.class);
    public static final String GUARANTEE = "every write acknowledged before the backup started (startedAt), at any ack/from, "
            + "is in this backup; writes acknowledged after it started may or may not be";
    private static final DateTimeFormatter NAME = DateTimeFormatter.ofPattern("'kvlab-'yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

    private final ConfiguredTarget target;
    private final Supplier<Topology> topology;
    private final Function<String, BackupNode> nodes;
    private final BackupThread thread;
    private final BackupStatus status;
    private final Retention retention;
    private final LongSupplier wallMillis;
    private final Duration timeout;
    private final Duration callTimeout;
    private final String kvlabVersion;
    private final AtomicBoolean running = new AtomicBoolean();

    /**
     * @param nodes       a node by its name in the topology: this node itself, or a peer over the replica protocol
     * @param timeout     the longest a node's part may take ({@code kvlab.backup.timeout})
     * @param callTimeout the longest a hold or release may take
     */
    public BackupCoordinator(ConfiguredTarget target, Supplier<Topology> topology, Function<String, BackupNode> nodes, BackupThread thread,
                             BackupStatus status, Retention retention, LongSupplier wallMillis, Duration timeout, Duration callTimeout,
                             String kvlabVersion) {
        this.target = target;
        this.topology = topology;
        this.nodes = nodes;
        this.thread = thread;
        this.status = status;
        this.retention = retention;
        this.wallMillis = wallMillis;
        this.timeout = timeout;
        this.callTimeout = callTimeout;
        this.kvlabVersion = kvlabVersion;
    }

    /** A backup taken: its manifest and where it is. */
    public record Result(ClusterManifest manifest, String where) {
    }

    /**
     * Takes a backup named {@code name} (null: {@code kvlab-YYYYMMDD-HHMMSS} of the cut, UTC), and
     * answers once it is complete. Fails with a {@link BackupFailure}: 400 a bad name, 409 one
     * running here or the name taken, 503 no target or a node that did not take its part. It goes
     * on when the caller stops waiting.
     */
    public Mono<Result> backup(String name) {
        return Mono.defer(() -> {
            BackupTarget to = target.get();
            if (name != null) {
                try {
                    BackupLayout.checkedName(name);
                } catch (IllegalArgumentException e) {
                    return Mono.error(BackupFailure.badRequest(e.getMessage()));
                }
            }
            if (!running.compareAndSet(false, true)) {
                return Mono.error(BackupFailure.busy("a backup coordinated by this node is running: one at a time"));
            }
            long cut = wallMillis.getAsLong();
            String backup = name != null ? name : NAME.format(Instant.ofEpochMilli(cut));
            status.coordinating(new BackupStatus.Running(backup, cut, true));
            Mono<Result> run = take(to, backup, cut, topology.get())
                    .doOnError(error -> {
                        log.warn("{}", error.getMessage());
                        if (!(error instanceof BackupFailure refused && refused.status() < 500)) {
                            status.coordinatedFailed(); // a failure, not a request refused (a name taken)
                        }
                    })
                    // Before the outcome reaches the caller, so that status read once it has its answer
                    // shows no backup running, and the next one is not refused as busy. Nothing cancels
                    // this run (it is cached and subscribed below), so termination is its only end.
                    .doOnTerminate(() -> {
                        status.coordinating(null);
                        running.set(false);
                    })
                    .cache();
            // Detached from the caller: a client that goes away does not cut a backup short.
            run.subscribe(result -> { }, error -> { });
            return run;
        });
    }

    private Mono<Result> take(BackupTarget to, String backup, long cut, Topology current) {
        List<String> members = current.nodes();
        return blocking(() -> {
                    if (to.exists(BackupLayout.clusterManifest(backup))) {
                        throw BackupFailure.busy("a backup named " + backup + " exists in " + to.describe() + " already");
                    }
                    return backup;
                })
                .then(Mono.defer(() -> takeNew(to, backup, cut, members)));
    }

    /** A backup of a name not taken yet; when it fails, what it stored goes (a taken name's backup is never touched). */
    private Mono<Result> takeNew(BackupTarget to, String backup, long cut, List<String> members) {
        long until = cut + timeout.toMillis();
        return holdAll(backup, until, members)
                .then(everyAnswer(Flux.range(0, members.size())
                        .map(index -> call(members.get(index), members, "take its part",
                                part(members.get(index), new BackupCalls.Snapshot(backup, cut, members, index)), timeout)),
                        members.size()))
                .flatMap(parts -> blocking(() -> complete(to, backup, cut, members, parts)))
                .flatMap(manifest -> blocking(() -> {
                    try {
                        retention.apply(to, wallMillis.getAsLong());
                    } catch (IOException | RuntimeException e) {
                        log.warn("backup {} is complete, but removing old backups from {} failed: {}", backup, to.describe(), e.toString());
                    }
                    return new Result(manifest, to.describe());
                }))
                .flatMap(result -> releaseAll(backup, members).thenReturn(result))
                .onErrorResume(error -> releaseAll(backup, members)
                        .then(blocking(() -> {
                            discard(to, backup);
                            return backup;
                        }))
                        .onErrorResume(ignored -> Mono.empty())
                        .then(Mono.error(asFailure(backup, error))));
    }

    /** Every node asked to hold its deletions; fails with the first failure once every node has answered. */
    private Mono<Void> holdAll(String backup, long until, List<String> members) {
        return everyAnswer(Flux.fromIterable(members)
                .map(node -> call(node, members, "hold its deletions of moved records",
                        nodes.apply(node).hold(new BackupCalls.Hold(backup, until)), callTimeout)), members.size())
                .then();
    }

    /**
     * What every call answered; or, once every call has answered or timed out, the first failure.
     * Failing at the first, the calls still on their way would be cancelled here but not on their
     * nodes: a release could then reach a node before its hold, which would stay until its deadline,
     * and a part stored after the failed backup was discarded would stay until retention.
     */
    private static <T> Mono<List<T>> everyAnswer(Flux<Mono<T>> calls, int concurrency) {
        return calls.flatMapDelayError(call -> call, concurrency, 1)
                .collectList()
                .onErrorMap(error -> Exceptions.unwrapMultiple(error).getFirst());
    }

    /** The node's part, which must be the one asked: a manifest of this backup and of the node's index. */
    private Mono<NodeManifest> part(String node, BackupCalls.Snapshot asked) {
        return nodes.apply(node).snapshot(asked)
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("answered no manifest")))
                .map(manifest -> {
                    if (!manifest.backup().equals(asked.backup()) || manifest.index() != asked.index()) {
                        throw new IllegalStateException("answered the manifest of backup " + manifest.backup() + " node " + manifest.index()
                                + ", not of " + asked.backup() + " node " + asked.index());
                    }
                    return manifest;
                });
    }

    /** The backup's manifest, written last: from now on the backup is complete. */
    private ClusterManifest complete(BackupTarget to, String backup, long cut, List<String> members, List<NodeManifest> parts)
            throws IOException {
        List<NodeManifest> ordered = new ArrayList<>(parts);
        ordered.sort(Comparator.comparingInt(NodeManifest::index));
        List<ClusterManifest.Part> summary = ordered.stream().map(part -> new ClusterManifest.Part(part.index(), part.node(), part.keys(),
                part.bytes(), part.uploadedBytes(), part.files().size(), part.durationMillis())).toList();
        ClusterManifest manifest = new ClusterManifest(NodeManifest.FORMAT, backup, cut, wallMillis.getAsLong(), kvlabVersion, GUARANTEE,
                members, summary);
        to.put(BackupLayout.clusterManifest(backup), Manifests.write(manifest));
        log.info("backup {} complete in {}: {} nodes, {} records, {} bytes, {} of them sent", backup, to.describe(), members.size(),
                summary.stream().mapToLong(ClusterManifest.Part::keys).sum(), summary.stream().mapToLong(ClusterManifest.Part::bytes).sum(),
                summary.stream().mapToLong(ClusterManifest.Part::uploadedBytes).sum());
        return manifest;
    }

    /** A step of one node, failing with a message that names the node and says why. */
    private <T> Mono<T> call(String node, List<String> members, String step, Mono<T> call, Duration limit) {
        return call.timeout(limit, Mono.error(() -> new TimeoutException("no answer within " + limit)))
                .onErrorMap(error -> !(error instanceof NodeFailed), error -> new NodeFailed(
                        error instanceof BackupFailure refused && refused.status() == 409 ? 409 : 503,
                        "node " + members.indexOf(node) + " (" + node + ") did not " + step + ": " + reason(error), error));
    }

    /** Every node's hold ended; a node that cannot be told keeps it until its deadline. */
    private Mono<Void> releaseAll(String backup, List<String> members) {
        return Flux.fromIterable(members)
                .flatMap(node -> nodes.apply(node).release(new BackupCalls.Release(backup))
                        .timeout(callTimeout)
                        .onErrorResume(error -> {
                            log.warn("backup {}: node {} was not told to release its hold ({}); it ends by itself", backup, node, reason(error));
                            return Mono.empty();
                        }))
                .then();
    }

    /** The parts a failed backup stored: its node manifests (their blobs go with retention, once unused). */
    private static void discard(BackupTarget to, String backup) throws IOException {
        for (BackupTarget.StoredObject object : to.list(BackupLayout.backup(backup))) {
            to.delete(object.key());
        }
    }

    private static BackupFailure asFailure(String backup, Throwable error) {
        if (error instanceof BackupFailure failure) {
            return failure;
        }
        return new BackupFailure(error instanceof NodeFailed failed ? failed.status : 503, "backup " + backup + " failed: " + reason(error) + "; no backup was written", error);
    }

    private static String reason(Throwable error) {
        if (error instanceof NodeFailed) {
            return error.getMessage();
        }
        String message = error.getMessage();
        Throwable cause = error.getCause();
        if (cause != null && cause.getMessage() != null && (message == null || !message.contains(cause.getMessage()))) {
            message = (message == null ? "" : message + ": ") + cause.getMessage();
        }
        return message == null ? error.getClass().getSimpleName() : message;
    }

    private <T> Mono<T> blocking(BlockingStep<T> step) {
        return Mono.fromCallable(step::run)
                .onErrorMap(IOException.class, e -> new UncheckedIOException("the backup target " + target.describe() + ": " + e.getMessage(), e))
                .subscribeOn(thread.scheduler());
    }

    @FunctionalInterface
    private interface BlockingStep<T> {
        T run() throws IOException;
    }

    /** A node that did not do its step: 409 when it is in another backup, else 503. */
    private static final class NodeFailed extends RuntimeException {
        final int status;

        NodeFailed(int status, String message, Throwable cause) {
            super(message, cause);
            this.status = status;
        }
    }
}
