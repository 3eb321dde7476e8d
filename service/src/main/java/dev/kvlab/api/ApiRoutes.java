package dev.kvlab.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.http.ChunkedStream;
import dev.kvlab.http.NettyResponses;
import dev.kvlab.http.StreamAdmission;
import dev.kvlab.http.ValueReader;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.Coordinator;
import dev.kvlab.storage.ExpiryProperties;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.reactor.netty.autoconfigure.NettyServerProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The client API of API.md on the client port: {@code /v0/entity}, {@code /v0/entities} and
 * {@code /v0/status}. (The replica protocol between nodes is the peer package's.)
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
                .route(path(EntityHandler.PATH), methodNotAllowed("GET, HEAD, PUT, DELETE"))
                .route(path(RangeHandler.PATH), methodNotAllowed("GET"))
                .route(path(MultiGetHandler.PATH), methodNotAllowed("GET, POST"))
                .route(path(BatchHandler.PATH), methodNotAllowed("POST"))
                .route(path(STATUS_PATH), methodNotAllowed("GET, HEAD"))
                .build();
    }

    /**
     * The client API's hot path and its ranges, served by Reactor Netty directly: single keys skip
     * WebFlux's dispatch cost ({@link EntityHandler}), ranges its writer's read-ahead
     * ({@link RangeHandler}).
     */
    @Bean
    NettyRouteProvider clientApiRoutes(Coordinator coordinator, ApiProperties properties, MemoryBudget budget, RequestMetrics metrics,
                                       TopologyProvider topology, MultiKeyProperties multiKey, ExpiryProperties expiry) {
        EntityHandler entity = new EntityHandler(coordinator, budget, new ValueReader(properties.maxValueSize(), budget), metrics,
                expiry.maxTtl());
        StreamAdmission ranges = new StreamAdmission(properties.maxConcurrentRanges(), ChunkedStream.reservation(properties.largestEntry()),
                budget, "ranges (kvlab.api.max-concurrent-ranges)");
        RangeHandler range = new RangeHandler(coordinator, ranges, metrics);
        MultiGetHandler multiGet = new MultiGetHandler(coordinator, topology, budget, new StreamAdmission(multiKey.maxConcurrentRequests(),
                ChunkedStream.reservation(properties.largestEntry()), budget, "multi-gets (kvlab.api.multi-key.max-concurrent-requests)"), multiKey, metrics);
        BatchHandler batch = new BatchHandler(coordinator, topology, budget, new StreamAdmission(multiKey.maxConcurrentRequests(),
                ChunkedStream.reservation(BatchHandler.LARGEST_RESULT), budget, "batches (kvlab.api.multi-key.max-concurrent-requests)"),
                multiKey, properties.maxValueSize().toBytes(), metrics);
        return routes -> {
            entity.addTo(routes);
            range.addTo(routes);
            multiGet.addTo(routes);
            batch.addTo(routes);
            // Constant on purpose: it answers as soon as the node serves, and it is the no-op
            // baseline the hot-path benchmark compares the store's routes with, on the same stack.
            return routes.get(STATUS_PATH, ApiRoutes::status).head(STATUS_PATH, ApiRoutes::status);
        };
    }

    private static Mono<Void> status(HttpServerRequest request, HttpServerResponse response) {
        return NettyResponses.plain(response, HttpResponseStatus.OK, "OK");
    }

    /** A target that is not a URI gets a 400 with a message, not Spring's empty one; one too long a 414 with a message. */
    @Bean
    NettyServerCustomizer requestTargetGuard(NettyServerProperties serverNetty) {
        long maxInitialLineLength = serverNetty.getMaxInitialLineLength().toBytes();
        return server -> server.doOnChannelInit((observer, channel, remoteAddress) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                channel.pipeline().addAfter(NettyPipeline.HttpCodec, RequestTargetGuard.NAME, new RequestTargetGuard(maxInitialLineLength));
            }
        });
    }

    /** The WebFlux route that answers the methods a path does not serve. */
    private static HandlerFunction<ServerResponse> methodNotAllowed(String allowed) {
        return request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                .header("Allow", allowed)
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue(request.method() + " is not allowed on " + request.path() + "; use " + allowed + "\n");
    }
}
