package dev.kvlab.peer;

import dev.kvlab.http.ConnectionGuards;
import dev.kvlab.lifecycle.LifecycleStep;
import io.netty.handler.ssl.SslContext;
import java.time.Duration;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.resources.LoopResources;

/**
 * The replica protocol on a port of its own ({@code kvlab.replication.port}), so a network policy
 * can admit replica traffic from the cluster's nodes only while clients reach the client port.
 * Runs on the web server's event loops; stops with it, draining requests in flight, before the
 * store closes. With an SSL context (kvlab.tls.replica-bundle), it speaks mutual TLS only.
 */
final class ReplicaServer implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ReplicaServer.class);

    private final int port;
    private final Function<HttpServerRoutes, HttpServerRoutes> routes;
    private final LoopResources loops;
    private final Duration drainTimeout;
    private final Duration idleTimeout;
    private final ConnectionGuards guards;
    private final SslContext tls;
    private final int maxInitialLineLength;
    private final int maxHeaderSize;
    private volatile DisposableServer server;

    /** {@code maxInitialLineLength} and {@code maxHeaderSize}: the client port's, so a call the client port takes fits here too. */
    ReplicaServer(int port, Function<HttpServerRoutes, HttpServerRoutes> routes, LoopResources loops, Duration drainTimeout,
                  Duration idleTimeout, int maxInitialLineLength, int maxHeaderSize, ConnectionGuards guards, SslContext tls) {
        this.port = port;
        this.routes = routes;
        this.loops = loops;
        this.drainTimeout = drainTimeout;
        this.idleTimeout = idleTimeout;
        this.guards = guards;
        this.tls = tls;
        this.maxInitialLineLength = maxInitialLineLength;
        this.maxHeaderSize = maxHeaderSize;
    }

    @Override
    public void start() {
        HttpServer http = guards.applyTo(HttpServer.create().port(port).runOn(loops).route(routes::apply)
                .httpRequestDecoder(spec -> spec.maxInitialLineLength(maxInitialLineLength).maxHeaderSize(maxHeaderSize)));
        if (tls != null) {
            http = http.secure(spec -> spec.sslContext(tls));
        }
        server = (idleTimeout != null ? http.idleTimeout(idleTimeout) : http).bindNow();
        log.info("replica protocol listening on port {}{}", server.port(), tls != null ? " (mutual TLS)" : "");
    }

    @Override
    public void stop() {
        DisposableServer running = server;
        if (running != null) {
            running.disposeNow(drainTimeout);
            server = null;
        }
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }

    /** Stops with the web server (Spring Boot's web server lifecycle phase), before beans are destroyed. */
    @Override
    public int getPhase() {
        return LifecycleStep.SERVERS;
    }
}
