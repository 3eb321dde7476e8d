package dev.kvlab.peer;

import dev.kvlab.backup.BackupCalls;
import dev.kvlab.backup.BackupFailure;
import dev.kvlab.backup.BackupNode;
import dev.kvlab.backup.Manifests;
import dev.kvlab.backup.NodeManifest;
import dev.kvlab.replication.ReplicaException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * A backup's coordinator's end of the backup calls to a peer ({@link BackupCalls}), each signed
 * with its body ({@link PeerAuthentication}) and bounded in time: a hold or release by
 * {@code callTimeout}, a part (a checkpoint and its upload) by {@code snapshotTimeout}.
 */
public final class BackupClient {

    /** A node's manifest lists its files, a hundred bytes each: 16 MiB is room for over a hundred thousand. */
    static final int MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

    private final WebClient client;
    private final PeerAuthentication authentication;
    private final Duration callTimeout;
    private final Duration snapshotTimeout;

    public BackupClient(WebClient client, PeerAuthentication authentication, Duration callTimeout, Duration snapshotTimeout) {
        this.client = client;
        this.authentication = authentication;
        this.callTimeout = callTimeout;
        this.snapshotTimeout = snapshotTimeout;
    }

    /** The peer named {@code node} in the topology (its base URL). */
    public BackupNode node(String node) {
        return new BackupNode() {
            @Override
            public Mono<Void> hold(BackupCalls.Hold hold) {
                return noContent(node, BackupCalls.HOLD_PATH, Manifests.write(hold), "a hold");
            }

            @Override
            public Mono<NodeManifest> snapshot(BackupCalls.Snapshot snapshot) {
                byte[] body = Manifests.write(snapshot);
                return post(node, BackupCalls.SNAPSHOT_PATH, body)
                        .exchangeToMono(response -> response.statusCode().value() != HttpStatus.OK.value()
                                ? BackupClient.<NodeManifest>refused(node, response)
                                : DataBufferUtils.join(response.bodyToFlux(DataBuffer.class), MAX_MANIFEST_BYTES).map(buffer -> {
                                    try {
                                        byte[] json = new byte[buffer.readableByteCount()];
                                        buffer.read(json);
                                        return Manifests.read(json, NodeManifest.class, "the manifest " + node + " answered");
                                    } finally {
                                        DataBufferUtils.release(buffer);
                                    }
                                }))
                        .timeout(snapshotTimeout, Mono.error(() -> new TimeoutException(node + " did not answer its part within "
                                + snapshotTimeout + " (kvlab.backup.timeout)")));
            }

            @Override
            public Mono<Void> release(BackupCalls.Release release) {
                return noContent(node, BackupCalls.RELEASE_PATH, Manifests.write(release), "a release");
            }
        };
    }

    private Mono<Void> noContent(String node, String path, byte[] body, String what) {
        return post(node, path, body)
                .exchangeToMono(response -> response.statusCode().value() == HttpStatus.NO_CONTENT.value()
                        ? response.releaseBody()
                        : BackupClient.<Void>refused(node, response))
                .timeout(callTimeout, Mono.error(() -> new TimeoutException(node + " did not answer " + what + " within " + callTimeout)));
    }

    /** The peer's refusal, with its reason; 409 (it is in another backup) stays a 409. */
    private static <T> Mono<T> refused(String node, ClientResponse response) {
        boolean busy = response.statusCode().value() == HttpStatus.CONFLICT.value();
        return RefusedCall.<T>of(node, response).onErrorMap(ReplicaException.class, e -> busy ? BackupFailure.busy(e.getMessage()) : e);
    }

    private WebClient.RequestHeadersSpec<?> post(String node, String path, byte[] body) {
        return SignedPost.to(client, authentication, node, path, MediaType.APPLICATION_JSON, body);
    }
}
