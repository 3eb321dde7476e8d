package dev.kvlab.peer;

import dev.kvlab.backup.BackupCalls;
import dev.kvlab.backup.BackupFailure;
import dev.kvlab.backup.BackupNode;
import dev.kvlab.backup.Manifests;
import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.NettyResponses;
import dev.kvlab.memory.MemoryBudget;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.ByteBuffer;
import java.util.function.Function;
import org.springframework.http.MediaType;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The replica protocol's backup calls ({@link BackupCalls}), served beside {@link ReplicaHandler}
 * under the same guard ({@link SignedRoutes}): a backup's coordinator asks this node to hold its
 * deletions of moved records, to take its part, and to release the hold.
 */
final class BackupHandler {

    private final SignedRoutes signed;
    private final BackupNode local;

    BackupHandler(PeerAuthentication authentication, MemoryBudget budget, BackupNode local) {
        this.signed = new SignedRoutes(authentication, budget);
        this.local = local;
    }

    HttpServerRoutes addTo(HttpServerRoutes routes) {
        return routes
                .post(BackupCalls.HOLD_PATH, signed.peersOnly(false, (request, response, call) ->
                        call(request, response, call, BackupCalls.Hold.class, "a backup hold",
                                hold -> local.hold(hold).then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.NO_CONTENT))))))
                .post(BackupCalls.SNAPSHOT_PATH, signed.peersOnly(false, (request, response, call) ->
                        call(request, response, call, BackupCalls.Snapshot.class, "a backup snapshot",
                                snapshot -> local.snapshot(snapshot).flatMap(manifest -> response.status(HttpResponseStatus.OK)
                                        .header(HttpHeaderNames.CONTENT_TYPE, MediaType.APPLICATION_JSON_VALUE)
                                        .send(Mono.just(Unpooled.wrappedBuffer(Manifests.write(manifest))))
                                        .then()))))
                .post(BackupCalls.RELEASE_PATH, signed.peersOnly(false, (request, response, call) ->
                        call(request, response, call, BackupCalls.Release.class, "a backup release",
                                release -> local.release(release).then(Mono.defer(() -> NettyResponses.empty(response, HttpResponseStatus.NO_CONTENT))))));
    }

    /** The call's JSON body, read and checked as {@link SignedRoutes#body} does, for {@code use}; a failure answered with its status. */
    private <T> Mono<Void> call(HttpServerRequest request, HttpServerResponse response, PeerAuthentication.Call call, Class<T> type,
                                String what, Function<T, Mono<Void>> use) {
        return signed.body(request, response, call, BackupCalls.MAX_BODY_BYTES, what, (body, lease) -> {
            T asked = parse(body, type, what);
            lease.release(); // a few KiB, read: the part may take long, and holds none of them
            return use.apply(asked).onErrorResume(BackupFailure.class, failure -> response.hasSentHeaders()
                    ? Mono.error(failure)
                    : NettyResponses.plain(response, HttpResponseStatus.valueOf(failure.status()), failure.getMessage()));
        });
    }

    private static <T> T parse(ByteBuffer body, Class<T> type, String what) {
        byte[] json = new byte[body.remaining()];
        body.get(json);
        try {
            return Manifests.read(json, type, what);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
    }
}
