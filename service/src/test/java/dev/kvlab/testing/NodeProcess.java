package dev.kvlab.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A kvlab node as its own JVM from the packaged jar ({@code kvlab.jar}, set by the failsafe plugin),
 * for what an in-process server cannot show: kill -9, SIGTERM, a small heap.
 */
public final class NodeProcess implements AutoCloseable {

    private final Path dataDir;
    private final Path log;
    private final List<String> jvmOptions;
    private final List<String> arguments;
    private final int port;
    private Process process;

    public NodeProcess(Path dataDir, Path log, List<String> jvmOptions, List<String> arguments) {
        this(dataDir, log, jvmOptions, arguments, freePort());
    }

    private NodeProcess(Path dataDir, Path log, List<String> jvmOptions, List<String> arguments, int port) {
        this.dataDir = dataDir;
        this.log = log;
        this.jvmOptions = jvmOptions;
        this.arguments = arguments;
        this.port = port;
    }

    /**
     * A static cluster of {@code size} nodes (not started) with data and logs under {@code dir}, and
     * the cluster's secret in {@code dir/cluster-secret}, as {@code make up} keeps it.
     */
    public static List<NodeProcess> cluster(int size, Path dir, List<String> jvmOptions) throws IOException {
        return cluster(size, dir, jvmOptions, List.of());
    }

    /** The same, with {@code settings} (such as {@code --kvlab.replication.timeout=5s}) for every node. */
    public static List<NodeProcess> cluster(int size, Path dir, List<String> jvmOptions, List<String> settings) throws IOException {
        Path secret = Files.writeString(dir.resolve("cluster-secret"), UUID.randomUUID() + "\n");
        int[] ports = new int[size];
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ports[i] = freePort();
            urls.add("http://127.0.0.1:" + ports[i]);
        }
        List<NodeProcess> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add(new NodeProcess(dir.resolve("n" + i), dir.resolve("n" + i + ".log"), jvmOptions,
                    concat(List.of("--kvlab.cluster.nodes=" + String.join(",", urls), "--kvlab.cluster.self=" + urls.get(i),
                            "--kvlab.cluster.secret-file=" + secret), settings), ports[i]));
        }
        return nodes;
    }

    public NodeProcess start() throws Exception {
        List<String> command = new ArrayList<>();
        command.add(System.getProperty("kvlab.java", "java"));
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(requiredProperty("kvlab.jar"));
        command.add("--server.port=" + port);
        command.add("--management.server.port=0");
        command.add("--kvlab.storage.dir=" + dataDir);
        command.addAll(arguments);
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        awaitServing(Duration.ofSeconds(60));
        return this;
    }

    private void awaitServing(Duration timeout) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the node exited with " + process.exitValue() + "; see " + log);
            }
            try {
                HttpResponse<Void> response = http.send(HttpRequest.newBuilder(URI.create(url() + "/v0/status"))
                        .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the node did not serve within " + timeout + "; see " + log);
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public KvClient client() {
        return new KvClient(url());
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** SIGKILL: no shutdown hook, no flush, no close. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, then waits for the JVM to exit; returns its exit code. */
    public int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the node did not exit within 60 s of SIGTERM; see " + log);
        }
        return process.exitValue();
    }

    /** Sends SIGTERM without waiting. */
    public void signalTerminate() {
        process.destroy();
    }

    public int awaitExit() throws InterruptedException {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the node did not exit within 60 s; see " + log);
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            kill();
        }
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }

    private static String requiredProperty(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("system property " + name + " is not set: run process tests with mvn verify");
        }
        return value;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
