package dev.kvlab.testing;

import dev.kvlab.peer.PeerAuthentication;
import dev.kvlab.peer.ReplicaProtocol;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;

/**
 * A small client of the kvlab API for tests: real HTTP, raw bytes, statuses as they come. Given the
 * cluster's secret ({@link #signing}), it signs its replica protocol calls as a peer does.
 */
public final class KvClient {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String baseUrl;
    private final PeerAuthentication peer;

    public KvClient(String baseUrl) {
        this(baseUrl, null);
    }

    private KvClient(String baseUrl, PeerAuthentication peer) {
        this.baseUrl = baseUrl;
        this.peer = peer;
    }

    /** One signer per secret, as a node is one: its nonces count on across the clients made for it. */
    private static final Map<String, PeerAuthentication> SIGNERS = new ConcurrentHashMap<>();

    /**
     * A client that signs its calls under {@code /internal/} with the cluster's secret, as a node
     * does, for the node whose name is {@code baseUrl} (the fixtures' nodes are named by their URLs).
     */
    public static KvClient signing(String baseUrl, String secret) {
        return new KvClient(baseUrl, signer(secret));
    }

    /** The signer of the cluster with this secret, shared by every signing client of it. */
    public static PeerAuthentication signer(String secret) {
        return SIGNERS.computeIfAbsent(secret, unused -> new PeerAuthentication(secret.getBytes(StandardCharsets.UTF_8),
                System::currentTimeMillis, 60_000, () -> "a client, which takes no replica calls"));
    }

    public static KvClient onPort(int port) {
        return new KvClient("http://127.0.0.1:" + port);
    }

    public String baseUrl() {
        return baseUrl;
    }

    public HttpResponse<byte[]> get(String id) {
        return get(id, null);
    }

    public HttpResponse<byte[]> get(String id, String replicas) {
        return send("GET", entity(id, replicas), HttpRequest.BodyPublishers.noBody());
    }

    public HttpResponse<byte[]> put(String id, byte[] value) {
        return put(id, value, null);
    }

    public HttpResponse<byte[]> put(String id, byte[] value, String replicas) {
        return send("PUT", entity(id, replicas), HttpRequest.BodyPublishers.ofByteArray(value));
    }

    public HttpResponse<byte[]> put(String id, String value) {
        return put(id, value.getBytes(StandardCharsets.UTF_8));
    }

    public HttpResponse<byte[]> delete(String id) {
        return delete(id, null);
    }

    public HttpResponse<byte[]> delete(String id, String replicas) {
        return send("DELETE", entity(id, replicas), HttpRequest.BodyPublishers.noBody());
    }

    /** A replica's own record of the key, bypassing the coordinator (200 with version headers, or 404). */
    public HttpResponse<byte[]> internalRecord(String id) {
        return send("GET", "/internal/v1/record?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8), HttpRequest.BodyPublishers.noBody());
    }

    /** Any method on any path and raw (already encoded) query, with headers as name, value pairs. */
    public HttpResponse<byte[]> send(String method, String pathAndQuery, HttpRequest.BodyPublisher body, String... headers) {
        return send(request(method, pathAndQuery, body, headers));
    }

    /** The request {@link #send} sends, signed when it is a replica call of a signing client. */
    public HttpRequest request(String method, String pathAndQuery, HttpRequest.BodyPublisher body, String... headers) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUrl + pathAndQuery))
                .timeout(Duration.ofSeconds(30))
                .method(method, body);
        if (headers.length > 0) {
            builder.headers(headers);
        }
        if (peer != null && pathAndQuery.startsWith("/internal/")) {
            byte[] bytes = bytesOf(body);
            String authorization;
            if (pathAndQuery.equals(ReplicaProtocol.STREAM_PATH)) {
                PeerAuthentication.StreamOpening opening = peer.openStream(baseUrl);
                sealFrames(bytes, opening.frames());
                authorization = opening.authorization();
            } else {
                authorization = peer.authorization(baseUrl, method, pathAndQuery, header(headers, ReplicaProtocol.VERSION_HEADER), bytes);
            }
            builder.header("Authorization", authorization);
            if (bytes.length > 0) {
                builder.method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
            }
        }
        return builder.build();
    }

    /** A request as it is, headers and all: to send a captured call again, or elsewhere. */
    public static HttpResponse<byte[]> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Writes each call frame's MAC in its last bytes, in order, as a node's stream does. */
    private static void sealFrames(byte[] frames, PeerAuthentication.FrameMacs macs) {
        for (int at = 0; at + 4 <= frames.length; ) {
            int length = ByteBuffer.wrap(frames, at, 4).getInt();
            if (length < PeerAuthentication.TAG_BYTES || at + 4 + length > frames.length) {
                return;
            }
            byte[] frame = Arrays.copyOfRange(frames, at, at + 4 + length);
            macs.seal(frame);
            System.arraycopy(frame, 0, frames, at, frame.length);
            at += frame.length;
        }
    }

    /** The bytes a body publisher sends. */
    public static byte[] bytesOf(HttpRequest.BodyPublisher body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<Void> done = new CompletableFuture<>();
        body.subscribe(new Flow.Subscriber<>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(ByteBuffer item) {
                byte[] bytes = new byte[item.remaining()];
                item.get(bytes);
                out.writeBytes(bytes);
            }

            @Override
            public void onError(Throwable throwable) {
                done.completeExceptionally(throwable);
            }

            @Override
            public void onComplete() {
                done.complete(null);
            }
        });
        done.join();
        return out.toByteArray();
    }

    private static String header(String[] headers, String name) {
        for (int i = 0; i + 1 < headers.length; i += 2) {
            if (headers[i].equalsIgnoreCase(name)) {
                return headers[i + 1];
            }
        }
        return null;
    }

    public static String entity(String id, String replicas) {
        String query = "/v0/entity?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8);
        return replicas == null ? query : query + "&replicas=" + replicas;
    }

    public static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }
}
