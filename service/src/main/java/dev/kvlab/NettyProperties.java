package dev.kvlab;

import dev.kvlab.http.BodyDeadline;
import dev.kvlab.http.ConnectionGuards;
import dev.kvlab.http.ConnectionLimit;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.netty.*}: the node's network threads, and how long and how many connections any
 * client may hold on its ports.
 *
 * @param eventLoops     Netty event loops shared by the client API, the replica protocol and the
 *                       replica client; 0 keeps Reactor Netty's default (the number of processors,
 *                       at least 4). Nodes that share a small machine do better with 1: every
 *                       hand-off between threads that sleep on different CPUs costs a wake-up, and
 *                       one loop per node hands a request's work between its own loops no more.
 * @param bodyTimeout    the longest a request body may go without new bytes; it then gets 408 and
 *                       its connection closes, giving back what it held of the memory budget. Also
 *                       the time any body gets before {@code bodyMinRate} counts
 * @param bodyMinRate    the bytes a second a body must arrive at on average after its first
 *                       {@code bodyTimeout}: a body gets {@code bodyTimeout} plus a second for
 *                       every {@code bodyMinRate} bytes it has brought, or 408
 * @param maxConnections the most connections each port keeps open at once; one more is answered
 *                       503 and closed
 */
@Validated
@ConfigurationProperties("kvlab.netty")
public record NettyProperties(@PositiveOrZero @DefaultValue("0") int eventLoops,
                              @NotNull @DefaultValue("10s") Duration bodyTimeout,
                              @NotNull @DefaultValue("64KB") DataSize bodyMinRate,
                              @Valid @NotNull @DefaultValue MaxConnections maxConnections) {

    /**
     * {@code kvlab.netty.max-connections.*}: a limit per port, so that clients who fill one port
     * leave the others to their users.
     *
     * @param client     the client port: clients' keep-alive connections (a load generator's 256
     *                   at the most in the lab) and the replica protocol when it has no port of its own
     * @param replica    the replica port ({@code kvlab.replication.port}): each peer keeps up to
     *                   {@code kvlab.replication.max-connections} (64) to it
     * @param management the management port: probes, metrics scrapes, admin calls
     */
    public record MaxConnections(@Min(1) @DefaultValue("2048") int client,
                                 @Min(1) @DefaultValue("2048") int replica,
                                 @Min(1) @DefaultValue("256") int management) {
    }

    /** The guards of the client port; {@code exemptPaths} are the replica protocol's long-lived streams when it shares the port. */
    public ConnectionGuards clientPort(List<String> exemptPaths) {
        return guards(maxConnections.client(), "client port", "kvlab.netty.max-connections.client", exemptPaths);
    }

    /** The guards of the replica port, whose streams of batches are long-lived bodies ({@code exemptPaths}). */
    public ConnectionGuards replicaPort(List<String> exemptPaths) {
        return guards(maxConnections.replica(), "replica port", "kvlab.netty.max-connections.replica", exemptPaths);
    }

    public ConnectionGuards managementPort() {
        return guards(maxConnections.management(), "management port", "kvlab.netty.max-connections.management", List.of());
    }

    private ConnectionGuards guards(int max, String port, String property, List<String> exemptPaths) {
        return new ConnectionGuards(new ConnectionLimit(max, port, property), new BodyDeadline.Rule(bodyTimeout, bodyMinRate, exemptPaths));
    }
}
