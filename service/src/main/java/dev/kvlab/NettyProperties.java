package dev.kvlab;

import jakarta.validation.constraints.PositiveOrZero;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.netty.*}: the node's network threads.
 *
 * @param eventLoops Netty event loops shared by the client API, the replica protocol and the
 *                   replica client; 0 keeps Reactor Netty's default (the number of processors,
 *                   at least 4). Nodes that share a small machine do better with 1: every
 *                   hand-off between threads that sleep on different CPUs costs a wake-up, and
 *                   one loop per node hands a request's work between its own loops no more.
 */
@Validated
@ConfigurationProperties("kvlab.netty")
public record NettyProperties(@PositiveOrZero @DefaultValue("0") int eventLoops) {
}
