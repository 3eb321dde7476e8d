package dev.kvlab.testing;

import dev.kvlab.KvlabApplication;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A static kvlab cluster of real servers inside the test JVM: each node its own Spring context,
 * port and RocksDB directory. Nodes can be stopped (their port refuses connections, their data
 * stays) and started again on the same port and data.
 */
public final class InProcessCluster implements AutoCloseable {

    private final int[] ports;
    /** Ports of the replica protocol, or null when it shares the client port. */
    private final int[] replicaPorts;
    private final Path[] dirs;
    private final ConfigurableApplicationContext[] nodes;
    /** The nodes of the cluster's node list now: the first {@code members} of the ports. */
    private int members;
    private final Map<String, String> extraProperties;
    /** Settings of one node only, such as a clock that runs ahead. */
    private final IntFunction<Map<String, String>> nodeProperties;
    /** The cluster's secret: the nodes sign their replica calls with it, and so do this fixture's clients. */
    private final String secret = UUID.randomUUID().toString();
    /** https when the nodes speak mutual TLS on their replica ports (kvlab.tls.replica-bundle). */
    private final String replicaScheme;

    private InProcessCluster(int size, int maxSize, boolean replicaPorts, Map<String, String> extraProperties,
                             IntFunction<Map<String, String>> nodeProperties) throws IOException {
        this.members = size;
        size = maxSize;
        this.ports = new int[size];
        this.replicaPorts = replicaPorts ? new int[size] : null;
        this.dirs = new Path[size];
        this.nodes = new ConfigurableApplicationContext[size];
        this.extraProperties = extraProperties;
        this.nodeProperties = nodeProperties;
        this.replicaScheme = extraProperties.containsKey("kvlab.tls.replica-bundle") ? "https" : "http";
        int[] free = freePorts(replicaPorts ? 2 * size : size);
        for (int i = 0; i < size; i++) {
            ports[i] = free[i];
            if (replicaPorts) {
                this.replicaPorts[i] = free[size + i];
            }
            dirs[i] = Files.createTempDirectory("kvlab-node" + i + "-");
        }
    }

    /** Starts a cluster of {@code size} nodes with a short replica timeout, so 504s come quickly. */
    public static InProcessCluster start(int size) throws IOException {
        return start(size, Map.of("kvlab.replication.timeout", "500ms"));
    }

    /** A cluster whose nodes serve the replica protocol on ports of their own ({@code kvlab.replication.port}). */
    public static InProcessCluster startWithReplicaPorts(int size) throws IOException {
        return startWithReplicaPorts(size, Map.of("kvlab.replication.timeout", "500ms"));
    }

    public static InProcessCluster startWithReplicaPorts(int size, Map<String, String> properties) throws IOException {
        return start(size, true, properties);
    }

    public static InProcessCluster start(int size, Map<String, String> properties) throws IOException {
        return start(size, false, properties);
    }

    /** A cluster whose node {@code i} also gets {@code nodeProperties.apply(i)}. */
    public static InProcessCluster start(int size, Map<String, String> properties, IntFunction<Map<String, String>> nodeProperties)
            throws IOException {
        return start(size, false, properties, nodeProperties);
    }

    /** Per-node settings that run node {@code i}'s clock {@code offsets[i]} ahead (negative: behind), for {@link #start(int, Map, IntFunction)}. */
    public static IntFunction<Map<String, String>> clockOffsets(String... offsets) {
        return node -> Map.of("kvlab.cluster.clock-offset", offsets[node]);
    }

    private static InProcessCluster start(int size, boolean replicaPorts, Map<String, String> properties) throws IOException {
        return start(size, replicaPorts, properties, node -> Map.of());
    }

    private static InProcessCluster start(int size, boolean replicaPorts, Map<String, String> properties,
                                          IntFunction<Map<String, String>> nodeProperties) throws IOException {
        return start(size, size, replicaPorts, properties, nodeProperties);
    }

    /** A cluster of {@code size} nodes that can grow to {@code maxSize} ({@link #resize}). */
    public static InProcessCluster startResizable(int size, int maxSize, Map<String, String> properties) throws IOException {
        return start(size, maxSize, false, properties, node -> Map.of());
    }

    private static InProcessCluster start(int size, int maxSize, boolean replicaPorts, Map<String, String> properties,
                                          IntFunction<Map<String, String>> nodeProperties) throws IOException {
        InProcessCluster cluster = new InProcessCluster(size, maxSize, replicaPorts, properties, nodeProperties);
        try {
            for (int i = 0; i < size; i++) {
                cluster.startNode(i);
            }
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    public int size() {
        return members;
    }

    /**
     * Changes the node list to the first {@code size} nodes, as a user of a static list does: every
     * node stops, and the nodes of the new list start with it, each on its own data.
     */
    public void resize(int size) {
        if (size < 1 || size > ports.length) {
            throw new IllegalArgumentException("this cluster has room for 1.." + ports.length + " nodes");
        }
        for (int i = 0; i < ports.length; i++) {
            stopNode(i);
        }
        members = size;
        for (int i = 0; i < size; i++) {
            startNode(i);
        }
    }

    public String url(int node) {
        return "http://127.0.0.1:" + ports[node];
    }

    /** A client of node {@code node}'s client port; it signs replica calls as the nodes do. */
    public KvClient client(int node) {
        return KvClient.signing(url(node), secret);
    }

    /** A client of node {@code node}'s management port: the actuator's health and metrics. */
    public KvClient management(int node) {
        return KvClient.onPort(nodes[node].getEnvironment().getRequiredProperty("local.management.port", Integer.class));
    }

    /**
     * The value of {@code series} about {@code peer} (its {@code peer} label) on node {@code node}'s
     * Prometheus page; fails when the node does not serve it.
     */
    public double peerMetric(int node, String series, String peer) throws IOException, InterruptedException {
        String page = KvClient.text(management(node).send("GET", "/actuator/prometheus", HttpRequest.BodyPublishers.noBody()));
        return page.lines().filter(line -> line.startsWith(series + "{") && line.contains("peer=\"" + peer + "\""))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no " + series + "{peer=" + peer + "} on node " + node + ":\n" + page));
    }

    /** A bean of node {@code node}'s application context, to look into it. */
    public <T> T bean(int node, Class<T> type) {
        return nodes[node].getBean(type);
    }

    /** The nodes' URLs as the topology names them, in the order of their indexes. */
    public List<String> nodeUrls() {
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < size(); i++) {
            urls.add(replicaUrl(i));
        }
        return urls;
    }

    public String secret() {
        return secret;
    }

    /** Where the node's replica protocol is served: its own port, or the client port. */
    public String replicaUrl(int node) {
        return replicaPorts == null ? url(node) : replicaScheme + "://127.0.0.1:" + replicaPorts[node];
    }

    public void stopNode(int node) {
        if (nodes[node] != null) {
            nodes[node].close();
            nodes[node] = null;
        }
    }

    /** Stops the node and empties its data directory: it starts again on an empty volume. */
    public void wipeNode(int node) {
        stopNode(node);
        try (var paths = Files.walk(dirs[node])) {
            paths.sorted(java.util.Comparator.reverseOrder()).filter(path -> !path.equals(dirs[node])).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void startNode(int node) {
        if (nodes[node] != null) {
            return;
        }
        Map<String, Object> properties = new HashMap<>(extraProperties);
        properties.putAll(nodeProperties.apply(node));
        properties.put("server.port", ports[node]);
        properties.put("kvlab.storage.dir", dirs[node].toString());
        properties.put("kvlab.storage.block-cache-size", "8MB");
        properties.put("kvlab.storage.write-buffer-size", "4MB");
        properties.put("management.server.port", 0);
        if (replicaPorts != null) {
            properties.put("kvlab.replication.port", replicaPorts[node]);
        }
        int[] nodePorts = replicaPorts != null ? replicaPorts : ports;
        properties.put("kvlab.cluster.nodes", Arrays.stream(nodePorts).limit(members).mapToObj(p -> replicaScheme + "://127.0.0.1:" + p)
                .collect(Collectors.joining(",")));
        properties.put("kvlab.cluster.self", replicaUrl(node));
        properties.put("kvlab.cluster.secret", secret);
        // Event loops of the node's own, as `make up` runs them: with Reactor Netty's global loops,
        // shared by every node in this JVM, stopping one node would dispose them under the others.
        properties.put("kvlab.netty.event-loops", "1");
        // As command-line arguments, so they win over application.properties as a user's would.
        String[] arguments = properties.entrySet().stream().map(setting -> "--" + setting.getKey() + "=" + setting.getValue()).toArray(String[]::new);
        nodes[node] = new SpringApplicationBuilder(KvlabApplication.class).run(arguments);
    }

    /** The nodes that hold a record (value or tombstone) of the key, asked directly on each replica. */
    public List<Integer> holders(String key) {
        List<Integer> holders = new ArrayList<>();
        for (int i = 0; i < ports.length; i++) {
            if (nodes[i] != null && KvClient.signing(replicaUrl(i), secret).internalRecord(key).statusCode() == 200) {
                holders.add(i);
            }
        }
        return holders;
    }

    @Override
    public void close() {
        for (int i = 0; i < nodes.length; i++) {
            stopNode(i);
        }
    }

    /** Distinct free ports: every socket stays open until all are chosen, so none is handed out twice. */
    private static int[] freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0));
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // a port we only looked at
                }
            }
        }
    }
}
