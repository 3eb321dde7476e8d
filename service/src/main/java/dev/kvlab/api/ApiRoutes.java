package dev.kvlab.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import dev.kvlab.replication.Coordinator;
import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.replication.ReplicaProtocol;
import dev.kvlab.storage.LocalStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The HTTP surface of a node: the client API of API.md ({@code /v0/entity}, {@code /v0/entities},
 * {@code /v0/status}) and the replica protocol between nodes ({@code /internal/v0/...}).
 */
@Configuration(proxyBeanMethods = false)
public class ApiRoutes {

    @Bean
    RequestMetrics requestMetrics(MeterRegistry registry) {
        return new RequestMetrics(registry);
    }

    @Bean
    RouterFunction<ServerResponse> apiRouter(Coordinator coordinator, ApiProperties properties, RequestMetrics metrics) {
        EntityHandler entity = new EntityHandler(coordinator, new ValueReader(properties.maxValueSize()));
        RouterFunction<ServerResponse> entityRoutes = RouterFunctions.route()
                .GET("/v0/entity", entity::get)
                .HEAD("/v0/entity", entity::get)
                .PUT("/v0/entity", entity::put)
                .DELETE("/v0/entity", entity::delete)
                .build()
                // Errors become statuses first, then the timer sees the status the client gets.
                .filter(ApiErrors::handle)
                .filter(metrics::timeEntity);
        return RouterFunctions.route()
                .add(entityRoutes)
                .route(path("/v0/entity"), ApiErrors.methodNotAllowed("GET, HEAD, PUT, DELETE"))
                // GET /v0/entities is served by Reactor Netty directly (rangeRoutes); other methods land here.
                .route(path("/v0/entities"), ApiErrors.methodNotAllowed("GET"))
                // Constant on purpose: it answers as soon as the node serves, and it is the no-op
                // baseline the hot-path benchmark compares the store's routes with.
                .GET("/v0/status", request -> ServerResponse.ok().contentType(MediaType.TEXT_PLAIN).bodyValue("OK\n"))
                .route(path("/v0/status"), ApiErrors.methodNotAllowed("GET"))
                .build();
    }

    @Bean
    RouterFunction<ServerResponse> replicaRouter(LocalStore store, HybridLogicalClock clock, ApiProperties properties) {
        ReplicaHandler replica = new ReplicaHandler(store, clock, new ValueReader(properties.maxValueSize()));
        return RouterFunctions.route()
                .GET(ReplicaProtocol.RECORD_PATH, replica::read)
                .PUT(ReplicaProtocol.RECORD_PATH, replica::write)
                .DELETE(ReplicaProtocol.RECORD_PATH, replica::delete)
                .route(path(ReplicaProtocol.RECORD_PATH), ApiErrors.methodNotAllowed("GET, PUT, DELETE"))
                .filter(ApiErrors::handle)
                .build();
    }

    /** Range streams bypass WebFlux's writer to bound their memory; see {@link RangeHandler}. */
    @Bean
    NettyRouteProvider rangeRoutes(Coordinator coordinator, LocalStore store, RequestMetrics metrics) {
        RangeHandler clientRange = new RangeHandler(coordinator::range, RangeFormat::negotiate, metrics);
        RangeHandler replicaRange = new RangeHandler(store::range, accepted -> RangeFormat.RECORDS, null);
        return routes -> routes
                .get("/v0/entities", clientRange::range)
                .get(ReplicaProtocol.RECORDS_PATH, replicaRange::range);
    }
}
