package dev.kvlab.api;

import dev.kvlab.http.HttpErrors;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * {@code kvlab.requests}: the latency of client requests as a histogram, by operation (get, put,
 * delete, range) and status code, so Prometheus can compute rates and percentiles per operation.
 * Recorded here instead of by Spring's HTTP observation: one timer per request and nothing else on
 * the hot path.
 */
final class RequestMetrics {

    private static final Logger log = LoggerFactory.getLogger(RequestMetrics.class);

    private final MeterRegistry registry;
    /** Timers by operation and status: built once, not on every request. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    RequestMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * {@code handler}, timed as {@code operation}: failures become the API's statuses first
     * ({@link HttpErrors#answered}), so the timer sees the status the client got. A client that
     * closed its connection gets nothing and is not timed: no answer reached it. A failure after the
     * answer began (the connection is cut) is timed as a 500.
     */
    BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> served(
            String operation, BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> handler) {
        BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> answered = HttpErrors.answered(handler);
        return (request, response) -> {
            long started = System.nanoTime();
            return answered.apply(request, response)
                    .doOnSuccess(done -> record(operation, response.status().code(), started))
                    .doOnError(error -> {
                        if (!HttpErrors.isClientGone(error)) {
                            record(operation, 500, started);
                        }
                    })
                    .onErrorResume(HttpErrors::isClientGone, error -> {
                        log.debug("{} {}: the client closed the connection", request.method(), request.fullPath());
                        return Mono.empty();
                    });
        };
    }

    void record(String operation, int status, long startNanos) {
        timer(operation, status).record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    private Timer timer(String operation, int status) {
        return timers.computeIfAbsent(operation + ' ' + status, unused -> Timer.builder("kvlab.requests")
                .description("Client requests, from arrival to the response (to the end of the stream for ranges)")
                .tag("operation", operation)
                .tag("status", Integer.toString(status))
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(50_000))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry));
    }
}
