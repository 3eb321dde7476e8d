package dev.kvlab.cluster;

import java.util.List;

/** A fixed cluster from {@code kvlab.cluster.nodes} and {@code kvlab.cluster.self}. */
public final class StaticTopologyProvider implements TopologyProvider {

    private final Topology topology;

    public StaticTopologyProvider(ClusterProperties properties) {
        this.topology = topologyOf(properties);
    }

    static Topology topologyOf(ClusterProperties properties) {
        if (properties.nodes().isEmpty()) {
            return new Topology(List.of(ClusterProperties.SINGLE_NODE), ClusterProperties.SINGLE_NODE);
        }
        if (properties.self() == null) {
            throw new IllegalArgumentException("kvlab.cluster.self must name this node when kvlab.cluster.nodes is set");
        }
        List<String> nodes = properties.nodes().stream().map(ClusterProperties::nodeName).sorted().toList();
        String self = ClusterProperties.nodeName(properties.self());
        if (!nodes.contains(self)) {
            throw new IllegalArgumentException("kvlab.cluster.self (" + self + ") is not one of kvlab.cluster.nodes " + nodes);
        }
        return new Topology(nodes, self);
    }

    @Override
    public Topology current() {
        return topology;
    }
}
