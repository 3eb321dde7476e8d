package dev.kvlab.admin;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Guards the management port: a call that can change state (any method but GET, HEAD and OPTIONS:
 * a leave, a repair, and whatever write or delete operation an actuator endpoint offers) goes on
 * only with a credential ({@link ManagementCredentials}); otherwise it gets 401 and a one-line
 * reason, and nothing of it runs. Reads (health probes, info, metrics, the cluster's status) stay
 * open: Kubernetes and Prometheus read them without credentials. Refused calls are counted
 * ({@code kvlab.management.refused}): someone who tries to move the cluster without the credential
 * shows there.
 */
public final class ManagementAuthentication implements WebFilter {

    private static final Set<HttpMethod> READS = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);

    private final ManagementCredentials credentials;
    private final Counter refused;

    public ManagementAuthentication(ManagementCredentials credentials, MeterRegistry registry) {
        this.credentials = credentials;
        this.refused = Counter.builder("kvlab.management.refused")
                .description("State-changing calls on the management port refused for want of a valid credential")
                .register(registry);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (READS.contains(exchange.getRequest().getMethod())) {
            return chain.filter(exchange);
        }
        String refusal = credentials.refusal(exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION));
        return refusal == null ? chain.filter(exchange) : refuse(exchange.getResponse(), refusal);
    }

    private Mono<Void> refuse(ServerHttpResponse response, String reason) {
        refused.increment();
        // A node with no credential to check against cannot be satisfied by another try: 403.
        response.setStatusCode(credentials.configured() ? HttpStatus.UNAUTHORIZED : HttpStatus.FORBIDDEN);
        if (credentials.configured()) {
            response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, ManagementCredentials.SCHEME + " realm=\"kvlab management\"");
        }
        response.getHeaders().setContentType(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.UTF_8));
        DataBuffer body = response.bufferFactory().wrap((reason + "\n").getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(body));
    }
}
