package dev.kvlab.cluster;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import java.net.URI;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.cluster.*}: who the other nodes are.
 *
 * @param nodes the base URLs of all nodes, this one included, for a static cluster; empty for a
 *              single node
 * @param self  this node's URL as it appears in {@code nodes}
 */
@Validated
@ConfigurationProperties("kvlab.cluster")
public record ClusterProperties(
        @NotNull @DefaultValue List<URI> nodes,
        URI self) {

    /** Name of the only node of a cluster of one. */
    public static final String SINGLE_NODE = "local";

    /** A node's name: its URL without a trailing slash, so "http://h:1/" and "http://h:1" are one node. */
    public static String nodeName(URI url) {
        String text = url.toString();
        return text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
    }
}
