package dev.kvlab.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.peer.PeerAuthentication;
import dev.kvlab.peer.ReplicaBatch;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.NodeProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Thousands of malformed and odd requests, generated (jqwik), against a real cluster of three node
 * processes: odd ids, {@code replicas}, ranges, methods, headers, bodies, broken HTTP framing, and
 * forged replica calls. No answer may be a 5xx but 503, no node may be lost, and the keys written
 * before (which the fuzzer never writes with a valid client request) must read back unchanged on
 * every replica.
 */
class FuzzedRequestsIT {

    static final int SENTINELS = 8;
    static final List<String> METHODS = List.of("GET", "HEAD", "PUT", "DELETE", "POST", "PATCH", "OPTIONS", "TRACE", "FOO", "get", "G E T");
    static final List<String> CLIENT_PATHS = List.of("/v0/entity", "/v0/entities", "/v0/status", "/v0/", "/v0/entity/more", "/",
            "/v0//entity", "/v0/../v0/entity", "/actuator/env", "/actuator/health", "/v1/entity", "/V0/ENTITY");
    static final List<String> REPLICA_PATHS = List.of("/internal/v1/record", "/internal/v1/records", "/internal/v1/batch",
            "/internal/v1/stream", "/internal/v0/record", "/internal/v1/");
    static final List<String> REPLICAS = List.of("2/3", "1/1", "3/3", "0/3", "3/2", "-1/2", "99999999999/1", "a/b", "2/3/4", "",
            "1/", "/1", "2 /3", "1/100", "4/4", "%32%2F%33", "1/1&replicas=3/3");

    static List<NodeProcess> nodes;
    static String secret;
    static final Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();
    /** One request of each kind of answer, for the summary. */
    static final Map<String, String> examples = new ConcurrentHashMap<>();

    @BeforeContainer
    static void startCluster() throws Exception {
        Path dir = Files.createTempDirectory("kvlab-fuzz");
        nodes = NodeProcess.cluster(3, dir, List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError"),
                List.of("--kvlab.replication.timeout=5s"));
        for (NodeProcess node : nodes) {
            node.start();
        }
        secret = Files.readString(dir.resolve("cluster-secret")).strip();
        for (int i = 0; i < SENTINELS; i++) {
            assertThat(nodes.get(i % 3).client().put(sentinel(i), sentinelValue(i), "3/3").statusCode()).isEqualTo(201);
        }
    }

    @AfterContainer
    static void stopCluster() throws Exception {
        System.out.println("[FuzzedRequestsIT] answers: " + new TreeMap<>(answers));
        new TreeMap<>(examples).forEach((answer, request) -> System.out.println("[FuzzedRequestsIT]   " + answer + " for instance: "
                + (request.length() > 160 ? request.substring(0, 160) + "..." : request)));
        for (NodeProcess node : nodes) {
            node.close();
        }
    }

    @Property(tries = 3000)
    void noRequestGetsA5xxButOverload(@ForAll("requests") FuzzedRequest request) throws IOException {
        String answer = exchange(nodes.get(Math.floorMod(request.raw().length, 3)).port(), request.raw());
        answers.computeIfAbsent(answer, a -> new AtomicInteger()).incrementAndGet();
        examples.putIfAbsent(answer, request.description().lines().findFirst().orElse(""));
        if (answer.matches("5\\d\\d")) {
            assertThat(answer).as("%s", request).isEqualTo("503");
        }
    }

    /** After the fuzzing: every node serves, and the sentinels are as they were on every replica. */
    @AfterProperty
    void everyNodeServesAndNoSentinelChanged() {
        for (NodeProcess node : nodes) {
            assertThat(node.isAlive()).as("%s is alive", node.url()).isTrue();
            for (int i = 0; i < SENTINELS; i++) {
                assertThat(node.client().get(sentinel(i), "3/3").body()).as("%s through %s", sentinel(i), node.url())
                        .isEqualTo(sentinelValue(i));
                assertThat(KvClient.signing(node.url(), secret).internalRecord(sentinel(i)).body()).as("%s's own replica on %s", sentinel(i), node.url())
                        .isEqualTo(sentinelValue(i));
            }
        }
    }

    @Provide
    Arbitrary<FuzzedRequest> requests() {
        return Arbitraries.frequencyOf(
                Tuple.of(6, clientRequests()),
                Tuple.of(3, forgedReplicaCalls()),
                Tuple.of(2, brokenFraming()));
    }

    /** Requests on the client's paths, with odd ids, replicas, ranges, headers and bodies; never a valid write of a sentinel. */
    private Arbitrary<FuzzedRequest> clientRequests() {
        Arbitrary<String> query = Combinators.combine(ids().optional(), Arbitraries.of(REPLICAS).optional(), ids().optional(), ids().optional())
                .as((id, replicas, start, end) -> String.join("&", new ArrayList<>(List.of(
                        id.map(v -> "id=" + v).orElse(""), replicas.map(v -> "replicas=" + v).orElse(""),
                        start.map(v -> "start=" + v).orElse(""), end.map(v -> "end=" + v).orElse("")))).replaceAll("&+", "&"));
        return Combinators.combine(weighted(METHODS, "GET", "PUT", "DELETE"), weighted(CLIENT_PATHS, "/v0/entity", "/v0/entities"), query, headers(), bodies())
                .as((method, path, q, headers, body) -> http(method, path + (q.isEmpty() ? "" : "?" + q), headers, body));
    }

    /** Replica calls without the cluster's secret: unsigned, signed with another secret, or with a made-up signature. */
    private Arbitrary<FuzzedRequest> forgedReplicaCalls() {
        Arbitrary<String> target = Combinators.combine(Arbitraries.of(REPLICA_PATHS), Arbitraries.integers().between(0, SENTINELS - 1), ids())
                .as((path, i, id) -> path + "?id=" + sentinel(i) + "&start=" + id);
        Arbitrary<String> version = Arbitraries.of("9223372036854775807.2147483647", "1.1", "0.0", "-1.5", "x", "", "18446744073709551616.1",
                (System.currentTimeMillis() << 16) + ".7");
        Arbitrary<String> authorization = Arbitraries.of("none", "garbage", "other-secret", "made-up");
        return Combinators.combine(Arbitraries.of("GET", "PUT", "DELETE", "POST"), target, version, authorization, Arbitraries.integers().between(0, SENTINELS - 1))
                .as((method, t, v, auth, i) -> {
                    List<String> headers = new ArrayList<>(List.of("X-Kvlab-Version", v));
                    switch (auth) {
                        case "garbage" -> headers.addAll(List.of("Authorization", "Basic dXNlcjpwYXNz"));
                        case "other-secret" -> headers.addAll(List.of("Authorization",
                                new PeerAuthentication("not-the-cluster-secret".getBytes(StandardCharsets.UTF_8), System::currentTimeMillis, 60_000,
                                        () -> "").authorization("http://127.0.0.1", method, t, v, (byte[]) null)));
                        case "made-up" -> headers.addAll(List.of("Authorization", PeerAuthentication.SCHEME + " t=" + System.currentTimeMillis()
                                + ",n=0123456789abcdef.1,b=" + "A".repeat(43) + "=,s=" + "A".repeat(43) + "="));
                        default -> { }
                    }
                    byte[] body = t.startsWith("/internal/v1/batch") ? ReplicaBatch.encodeCalls(List.of(forgedWrite(i)))
                            : t.startsWith("/internal/v1/stream") ? ReplicaBatch.frameCalls(List.of(forgedWrite(i)))
                            : "evil".getBytes(StandardCharsets.UTF_8);
                    return http(method, t, headers, method.equals("GET") ? new byte[0] : body);
                });
    }

    /** Requests whose HTTP is broken: cut short, lying lengths, bad chunks, junk, oversized lines, pipelines. */
    private Arbitrary<FuzzedRequest> brokenFraming() {
        return Arbitraries.of(
                "PUT /v0/entity?id=cut HTTP/1.1\r\nHost: k\r\nContent-Length: 100\r\n\r\nshort",
                "PUT /v0/entity?id=neg HTTP/1.1\r\nHost: k\r\nContent-Length: -5\r\n\r\nabc",
                "PUT /v0/entity?id=nan HTTP/1.1\r\nHost: k\r\nContent-Length: many\r\n\r\nabc",
                "PUT /v0/entity?id=huge HTTP/1.1\r\nHost: k\r\nContent-Length: 99999999999999999999\r\n\r\nabc",
                "PUT /v0/entity?id=both HTTP/1.1\r\nHost: k\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                "PUT /v0/entity?id=chunk HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
                "PUT /v0/entity?id=chunk2 HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\nabc",
                "GET /v0/entity?id=a\r\n\r\n",
                "GET\r\n\r\n",
                "\r\n\r\n\r\n",
                "\u0000\u0001\u0002\u00ff garbage",
                "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                "GET /v0/entity?id=lf HTTP/1.1\nHost: k\n\n",
                "GET /v0/entity?id=colon HTTP/1.1\r\nHost k\r\nNo-Colon\r\n\r\n",
                "GET /v0/entity?id=" + "x".repeat(20_000) + " HTTP/1.1\r\nHost: k\r\n\r\n",
                "GET /v0/status HTTP/1.1\r\nHost: k\r\nX-Big: " + "y".repeat(20_000) + "\r\n\r\n",
                "GET /v0/entity?id=p1 HTTP/1.1\r\nHost: k\r\n\r\nGET /v0/entity?id=p2 HTTP/1.1\r\nHost: k\r\n\r\nPUT /v0/entity?id=p3 HTTP/1.1\r\nHost: k\r\nContent-Length: 1\r\n\r\nv",
                "GET /v0/entity?id=%G1 HTTP/1.1\r\nHost: k\r\n\r\n",
                "GET /v0/entity?id=a|b HTTP/1.1\r\nHost: k\r\n\r\n",
                "GET http://evil.example/v0/entity?id=abs HTTP/1.1\r\nHost: k\r\n\r\n",
                "GET /v0/entity?id=ver HTTP/9.9\r\nHost: k\r\n\r\n",
                "PUT /v0/entity?id=expect HTTP/1.1\r\nHost: k\r\nExpect: 100-continue\r\nContent-Length: 2000000\r\n\r\n")
                .map(text -> new FuzzedRequest("broken framing", text.getBytes(StandardCharsets.ISO_8859_1)));
    }

    /** One of {@code all}, the {@code common} ones five times as often as the others. */
    private static Arbitrary<String> weighted(List<String> all, String... common) {
        List<String> often = List.of(common);
        return Arbitraries.frequencyOf(all.stream().map(value -> Tuple.of(often.contains(value) ? 5 : 1, Arbitraries.just(value)))
                .toArray(Tuple.Tuple2[]::new));
    }

    /** Ids: ordinary, empty, over-long, percent-encoded, non-ASCII, NUL and escapes; never a sentinel's. */
    private static Arbitrary<String> ids() {
        return Arbitraries.oneOf(
                Arbitraries.strings().alpha().numeric().ofMinLength(1).ofMaxLength(12).map(s -> "k" + s),
                Arbitraries.of("", "%00", "%FF%FE", "%E2%82%AC", "caf%C3%A9", "+", "a%2Bb", "%", "%4", "%%", "a&id=b", "a=b", "sentinel",
                        "%73entinel-x"),
                Arbitraries.integers().between(1020, 1030).map(n -> "a".repeat(n)),
                Arbitraries.integers().between(300, 400).map(n -> "%41".repeat(n)));
    }

    private static Arbitrary<List<String>> headers() {
        Arbitrary<List<String>> one = Arbitraries.of(
                List.of(), List.of("Accept", "application/x-ndjson"), List.of("Accept", "*/*;q=zz"), List.of("Accept", ";;;"),
                List.of("Connection", "close"), List.of("X-Kvlab-Version", "1.1"), List.of("Authorization", "kvlab-hmac-sha256 t=1,s=x"),
                List.of("Content-Type", "text/plain"), List.of("Expect", "100-continue"), List.of("Transfer-Encoding", "gzip"));
        return one.list().ofMaxSize(3).map(lists -> lists.stream().flatMap(List::stream).toList());
    }

    private static Arbitrary<byte[]> bodies() {
        return Arbitraries.oneOf(
                Arbitraries.just(new byte[0]),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(2048),
                Arbitraries.integers().between(1_048_570, 1_048_600).map(byte[]::new));
    }

    private static StoreOp forgedWrite(int i) {
        byte[] value = Record.newValueArray(4);
        System.arraycopy("evil".getBytes(StandardCharsets.UTF_8), 0, value, Record.HEADER_BYTES, 4);
        return new StoreOp.Write(sentinel(i).getBytes(StandardCharsets.UTF_8), Record.value(Version.parse("9223372036854775807.2147483647"), value));
    }

    /** An HTTP/1.1 request with a Content-Length that matches its body. */
    private static FuzzedRequest http(String method, String target, List<String> headers, byte[] body) {
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: kvlab\r\n");
        for (int i = 0; i + 1 < headers.size(); i += 2) {
            head.append(headers.get(i)).append(": ").append(headers.get(i + 1)).append("\r\n");
        }
        if (body.length > 0 || method.equals("PUT") || method.equals("POST")) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        raw.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
        raw.writeBytes(body);
        String shown = head.length() > 300 ? head.substring(0, 300) + "..." : head.toString();
        return new FuzzedRequest(shown + "[" + body.length + " bytes of body]", raw.toByteArray());
    }

    /**
     * Sends the bytes, closes the sending side, and reads the first status line: its code, or what
     * came instead ("closed" when the node closed without an answer, "no answer" after 5 s).
     */
    private static String exchange(int port, byte[] raw) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            try {
                socket.getOutputStream().write(raw);
                socket.shutdownOutput();
            } catch (IOException closedWhileSending) {
                // the node answered (and closed) before it read everything: read its answer
            }
            return statusOf(socket.getInputStream());
        }
    }

    private static String statusOf(InputStream in) throws IOException {
        byte[] line = new byte[12];
        int read = 0;
        try {
            while (read < line.length) {
                int n = in.read(line, read, line.length - read);
                if (n < 0) {
                    break;
                }
                read += n;
            }
        } catch (SocketTimeoutException e) {
            return "no answer";
        } catch (IOException reset) {
            return read == 0 ? "reset" : "cut";
        }
        if (read == 0) {
            return "closed";
        }
        String text = new String(line, 0, read, StandardCharsets.ISO_8859_1);
        // The version is the request's as Netty echoes it (HTTP/9.9 for a request that said so).
        return text.matches("HTTP/\\d\\.\\d \\d\\d\\d") ? text.substring(9, 12) : "not http: " + Arrays.toString(Arrays.copyOf(line, read));
    }

    private static String sentinel(int i) {
        return "sentinel-" + i;
    }

    private static byte[] sentinelValue(int i) {
        return ("sentinel value " + i).getBytes(StandardCharsets.UTF_8);
    }

    record FuzzedRequest(String description, byte[] raw) {
        @Override
        public String toString() {
            return description;
        }
    }
}
