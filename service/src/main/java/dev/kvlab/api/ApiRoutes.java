package dev.kvlab.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.storage.LocalStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The HTTP surface of a node: the client API of API.md ({@code /v0/entity}, {@code /v0/entities},
 * {@code /v0/status}) and the replica protocol between nodes ({@code /internal/v1/...}), on the
 * client port or, with {@code kvlab.replication.port}, on a port of its own.
 */
@Configuration(proxyBeanMethods = false)
public class ApiRoutes {

    static final String STATUS_PATH = "/v0/status";

    @Bean
    RequestMetrics requestMetrics(MeterRegistry registry) {
        return new RequestMetrics(registry);
    }

    /** What WebFlux serves: the 405s of the paths Reactor Netty serves (the actuator is Spring's own). */
    @Bean
    RouterFunction<ServerResponse> apiRouter() {
        return RouterFunctions.route()
                .route(path(EntityHandler.PATH), ApiErrors.methodNotAllowed("GET, HEAD, PUT, DELETE"))
                .route(path("/v0/entities"), ApiErrors.methodNotAllowed("GET"))
                .route(path(STATUS_PATH), ApiErrors.methodNotAllowed("GET, HEAD"))
                .build();
    }

    /** The PUT bodies the node holds at once: client PUTs and single replica writes share one heap. */
    @Bean
    BodyBudget bodyBudget(ApiProperties properties, MeterRegistry registry) {
        BodyBudget budget = new BodyBudget(properties.bodyBytesInFlight(Runtime.getRuntime().maxMemory()));
        Gauge.builder("kvlab.requests.bodies.held", budget, BodyBudget::held)
                .description("Bytes of PUT bodies the node holds now; at kvlab.api.max-body-bytes-in-flight, PUTs get 503")
                .baseUnit("bytes")
                .register(registry);
        return budget;
    }

    @Bean
    ReplicaHandler replicaHandler(LocalStore store, HybridLogicalClock clock, ApiProperties properties, BodyBudget bodies,
                                  ReplicationProperties replication) {
        return new ReplicaHandler(store, clock, properties.maxValueSize(), bodies, replication.batch());
    }

    @Bean
    ReplicaStreamsLifecycle replicaStreamsLifecycle(ReplicaHandler replica) {
        return new ReplicaStreamsLifecycle(replica);
    }

    /**
     * The client API's hot path and its ranges, served by Reactor Netty directly: single keys skip
     * WebFlux's dispatch cost ({@link EntityHandler}), ranges its writer's read-ahead
     * ({@link RangeHandler}). The replica protocol is served here too, or on its own port.
     */
    @Bean
    NettyRouteProvider nettyRoutes(Coordinator coordinator, ApiProperties properties, BodyBudget bodies, RequestMetrics metrics,
                                   ReplicaHandler replica, ReplicationProperties replication) {
        EntityHandler entity = new EntityHandler(coordinator, new ValueReader(properties.maxValueSize(), bodies), metrics);
        RangeHandler clientRange = new RangeHandler(coordinator::range, RangeFormat::negotiate, metrics);
        return routes -> {
            entity.addTo(routes);
            routes.get("/v0/entities", clientRange::range);
            // Constant on purpose: it answers as soon as the node serves, and it is the no-op
            // baseline the hot-path benchmark compares the store's routes with, on the same stack.
            routes.get(STATUS_PATH, ApiRoutes::status).head(STATUS_PATH, ApiRoutes::status);
            return replication.port() > 0 ? routes : replica.addTo(routes);
        };
    }

    private static Mono<Void> status(HttpServerRequest request, HttpServerResponse response) {
        return NettyResponses.plain(response, HttpResponseStatus.OK, "OK");
    }

    /** A target that is not a URI gets a 400 with a message, not Spring's empty one. */
    @Bean
    NettyServerCustomizer requestTargetGuard() {
        return server -> server.doOnChannelInit((observer, channel, remoteAddress) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                channel.pipeline().addAfter(NettyPipeline.HttpCodec, RequestTargetGuard.NAME, new RequestTargetGuard());
            }
        });
    }

    @Bean
    @ConditionalOnExpression("${kvlab.replication.port:0} > 0")
    ReplicaServer replicaServer(ReplicaHandler replica, ReplicationProperties replication, ReactorResourceFactory resources,
                                @Value("${spring.lifecycle.timeout-per-shutdown-phase:20s}") Duration drainTimeout) {
        return new ReplicaServer(replication.port(), replica::addTo, resources.getLoopResources(), drainTimeout);
    }
}
