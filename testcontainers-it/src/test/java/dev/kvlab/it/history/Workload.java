package dev.kvlab.it.history;

import dev.kvlab.it.fixture.KvClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

/**
 * Concurrent clients that PUT, DELETE and GET a small set of keys at {@code replicas} through
 * random nodes, recording every operation in a {@link History}. Every PUT writes a value never
 * written before, so a read's answer names the write it came from. Bounded: each client stops
 * after {@code maxOperations} or when the workload is stopped. Clients send only to the nodes in
 * rotation, so a test can take a node out before restarting it, as a load balancer would.
 *
 * <p>By default 45 % PUTs, 10 % DELETEs and 45 % GETs ({@link #withMix}); {@link #writesOnly()}
 * sends no GET, so no read repair can mend a replica behind the test's back.
 */
public final class Workload implements AutoCloseable {

    private final List<KvClient> nodes;
    private final History history;
    private final int clients;
    private final List<String> keys;
    private final String replicas;
    private final int maxOperations;
    private int putPercent = 45;
    private int deletePercent = 10;
    private Duration pauseAfterFailure = Duration.ZERO;
    private final AtomicBoolean running = new AtomicBoolean();
    /** The nodes clients may send requests to, as a load balancer's rotation; all at first. */
    private final Set<Integer> rotation = ConcurrentHashMap.newKeySet();
    private final List<Thread> threads = new ArrayList<>();

    public Workload(List<KvClient> nodes, History history, int clients, int keys, String replicas, int maxOperations) {
        this.nodes = List.copyOf(nodes);
        this.history = history;
        this.clients = clients;
        // A run's own keys: a cluster shared by several runs holds the values of the earlier ones.
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        this.keys = IntStream.range(0, keys).mapToObj(k -> "history-" + run + "-" + k).toList();
        this.replicas = replicas;
        this.maxOperations = maxOperations;
        for (int i = 0; i < nodes.size(); i++) {
            rotation.add(i);
        }
    }

    /** {@code putPercent} % PUTs, {@code deletePercent} % DELETEs, the rest GETs. Before {@link #start()}. */
    public Workload withMix(int putPercent, int deletePercent) {
        if (putPercent < 0 || deletePercent < 0 || putPercent + deletePercent > 100) {
            throw new IllegalArgumentException("PUTs " + putPercent + " % and DELETEs " + deletePercent + " %");
        }
        this.putPercent = putPercent;
        this.deletePercent = deletePercent;
        return this;
    }

    /** 75 % PUTs and 25 % DELETEs, no GET. Before {@link #start()}. */
    public Workload writesOnly() {
        return withMix(75, 25);
    }

    /**
     * After an operation that got no acknowledgement (a 504, a refused connection) the client waits
     * this long before its next one, as a client backs off from a cluster that is restarting,
     * rather than spend its operations failing. None by default. Before {@link #start()}.
     */
    public Workload pausingAfterFailures(Duration pause) {
        this.pauseAfterFailure = pause;
        return this;
    }

    /** The keys this workload reads and writes. */
    public List<String> keys() {
        return keys;
    }

    /** Stops sending new requests to {@code node}, as a load balancer does before a node is restarted. */
    public void takeOutOfRotation(int node) {
        rotation.remove(node);
    }

    public void putBackInRotation(int node) {
        rotation.add(node);
    }

    public Workload start() {
        running.set(true);
        for (int c = 0; c < clients; c++) {
            int client = c;
            threads.add(Thread.ofPlatform().name("workload-" + c).start(() -> run(client)));
        }
        return this;
    }

    /** Stops the clients and waits for their last operations. */
    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread thread : threads) {
            thread.join(Duration.ofSeconds(30));
        }
    }

    private void run(int client) {
        Random random = new Random(client);
        for (int n = 0; n < maxOperations && running.get(); n++) {
            List<Integer> available = List.copyOf(rotation);
            int node = available.get(random.nextInt(available.size()));
            String key = keys.get(random.nextInt(keys.size()));
            int dice = random.nextInt(100);
            Operation.Type type = dice < putPercent ? Operation.Type.PUT
                    : dice < putPercent + deletePercent ? Operation.Type.DELETE : Operation.Type.GET;
            String value = type == Operation.Type.PUT ? "c" + client + "-" + n : null;
            Operation operation = execute(client, node, type, key, value);
            history.record(operation);
            if (!operation.acknowledged() && pauseAfterFailure.isPositive()) {
                try {
                    Thread.sleep(pauseAfterFailure);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private Operation execute(int client, int node, Operation.Type type, String key, String value) {
        KvClient coordinator = nodes.get(node);
        long start = history.now();
        try {
            HttpResponse<byte[]> response = switch (type) {
                case PUT -> coordinator.put(key, value, replicas);
                case DELETE -> coordinator.delete(key, replicas);
                case GET -> coordinator.get(key, replicas);
            };
            long end = history.now();
            int status = response.statusCode();
            boolean acknowledged = switch (type) {
                case PUT -> status == 201;
                case DELETE -> status == 202;
                case GET -> status == 200 || status == 404;
            };
            String returned = type == Operation.Type.GET && status == 200 ? new String(response.body(), StandardCharsets.UTF_8) : value;
            return new Operation(client, node, type, key, returned, start, end,
                    acknowledged ? Operation.Outcome.OK : Operation.Outcome.UNKNOWN, Integer.toString(status));
        } catch (RuntimeException e) {
            return new Operation(client, node, type, key, value, start, history.now(), Operation.Outcome.UNKNOWN,
                    e.getClass().getSimpleName());
        }
    }
}
