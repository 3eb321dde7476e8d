package dev.kvlab.cluster;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.cluster.*}: who the other nodes are.
 *
 * @param discovery where the node list comes from: {@code static} (the {@code nodes} list) or
 *                  {@code dns} (the pods of a StatefulSet behind a headless Service)
 * @param nodes     the base URLs of all nodes, this one included, for a static cluster; empty for
 *                  a single node
 * @param self      this node's URL as it appears in {@code nodes}
 * @param dns       settings of DNS discovery
 * @param secret    the secret the nodes share: only a caller that has it may speak the replica
 *                  protocol (see {@code secretFile}, which keeps it off command lines)
 * @param secretFile a file that holds the secret (its text, surrounding white space ignored)
 * @param maxClockSkew the largest difference between the nodes' clocks the cluster tolerates: a
 *                  replica call signed further from this node's clock, or a version further ahead
 *                  of it, is refused
 * @param clockOffset shifts this node's wall clock, for experiments with skewed clocks; 0 in
 *                  production
 */
@Validated
@ConfigurationProperties("kvlab.cluster")
public record ClusterProperties(
        @NotNull @DefaultValue("static") Discovery discovery,
        @NotNull @DefaultValue List<URI> nodes,
        URI self,
        @NotNull @Valid @DefaultValue Dns dns,
        String secret,
        Path secretFile,
        @NotNull @DefaultValue("60s") Duration maxClockSkew,
        @NotNull @DefaultValue("0s") Duration clockOffset) {

    /** Name of the only node of a cluster of one. */
    public static final String SINGLE_NODE = "local";

    public ClusterProperties {
        if (secret != null && secretFile != null) {
            throw new IllegalArgumentException("set kvlab.cluster.secret or kvlab.cluster.secret-file, not both");
        }
        if (maxClockSkew != null && (maxClockSkew.isNegative() || maxClockSkew.isZero())) {
            throw new IllegalArgumentException("kvlab.cluster.max-clock-skew must be positive, was " + maxClockSkew);
        }
    }

    /**
     * The cluster's secret as bytes, read from {@code secretFile} when set; null when there is none.
     * A weak one ({@link SecretStrength}) is refused, so a node does not start on it.
     */
    public byte[] secretBytes() {
        return SecretStrength.read("the cluster secret", secret, secretFile, "kvlab.cluster.secret-file");
    }

    public enum Discovery { STATIC, DNS }

    /**
     * DNS discovery: the nodes are the pods {@code <set>-0 .. <set>-(n-1)} of a StatefulSet, each
     * reachable as {@code <pod>.<service>}. Their number is {@code replicas} when set, otherwise it
     * is read from the SRV records of the headless service (which must publish not-ready
     * addresses), re-read every {@code refreshInterval}.
     *
     * @param service         the headless service's DNS name, e.g. {@code kvlab-headless.default.svc.cluster.local}
     * @param podName         this pod's name, {@code <set>-<ordinal>}; defaults to {@code $HOSTNAME}
     * @param scheme          the scheme of node URLs
     * @param port            the port of node URLs; 0 means this node's {@code server.port}
     * @param replicas        the StatefulSet's size if fixed; 0 reads it from DNS
     * @param refreshInterval how often DNS is read again
     * @param shrinkAfter     how long pods must be missing from DNS before the cluster shrinks: a
     *                        pod being rescheduled vanishes from DNS for a moment, and shrinking
     *                        would move its keys elsewhere
     * @param joinTimeout     how long a pod that came into DNS after this node started is kept out
     *                        of the topology while it is not seen to serve ({@link ServingNodes})
     * @param server          a DNS server ({@code host:port}) to ask instead of the system's resolvers
     */
    public record Dns(
            String service,
            String podName,
            @NotNull @DefaultValue("http") String scheme,
            @Min(0) @DefaultValue("0") int port,
            @Min(0) @DefaultValue("0") int replicas,
            @NotNull @DefaultValue("5s") Duration refreshInterval,
            @NotNull @DefaultValue("60s") Duration shrinkAfter,
            @NotNull @DefaultValue("120s") Duration joinTimeout,
            String server) {
    }

    /** A node's name: its URL without a trailing slash, so "http://h:1/" and "http://h:1" are one node. */
    public static String nodeName(URI url) {
        String text = url.toString();
        return text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
    }
}
