package dev.kvlab.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import dev.kvlab.replication.Coordinator;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** The client API of ../spec/API.md: {@code /v0/entity}, {@code /v0/entities}, {@code /v0/status}. */
@Configuration(proxyBeanMethods = false)
public class ApiRoutes {

    @Bean
    RouterFunction<ServerResponse> apiRouter(Coordinator coordinator, ApiProperties properties) {
        EntityHandler entity = new EntityHandler(coordinator, new ValueReader(properties.maxValueSize()));
        return RouterFunctions.route()
                .GET("/v0/entity", entity::get)
                .HEAD("/v0/entity", entity::get)
                .PUT("/v0/entity", entity::put)
                .DELETE("/v0/entity", entity::delete)
                .route(path("/v0/entity"), ApiErrors.methodNotAllowed("GET, HEAD, PUT, DELETE"))
                // GET /v0/entities is served by Reactor Netty directly (rangeRoute); other methods land here.
                .route(path("/v0/entities"), ApiErrors.methodNotAllowed("GET"))
                // Constant on purpose: it answers as soon as the node serves, and it is the no-op
                // baseline the hot-path benchmark compares the store's routes with.
                .GET("/v0/status", request -> ServerResponse.ok().contentType(MediaType.TEXT_PLAIN).bodyValue("OK\n"))
                .route(path("/v0/status"), ApiErrors.methodNotAllowed("GET"))
                .filter(ApiErrors::handle)
                .build();
    }

    /** Range streams bypass WebFlux's writer to bound their memory; see {@link RangeHandler}. */
    @Bean
    NettyRouteProvider rangeRoute(Coordinator coordinator) {
        RangeHandler range = new RangeHandler(coordinator);
        return routes -> routes.get("/v0/entities", range::range);
    }
}
