package dev.kvlab.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvlab.requests}: the latency of client requests as a histogram, by operation (get, put,
 * delete, range) and status code, so Prometheus can compute rates and percentiles per operation.
 * Recorded here instead of by Spring's HTTP observation: one timer per request and nothing else on
 * the hot path.
 */
final class RequestMetrics {

    private final MeterRegistry registry;
    /** Timers by operation and status: built once, not on every request. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    RequestMetrics(MeterRegistry registry) {
        this.registry = registry;
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
