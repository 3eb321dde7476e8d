package dev.kvlab.testing;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/** Multi-gets and batches for tests, over a raw socket so that the answer's chunks can be seen. */
public final class MultiKeyRequests {

    public static final String NDJSON = "Accept: application/x-ndjson";

    private MultiKeyRequests() {
    }

    /** {@code POST target} with {@code body} and its Content-Length; the whole response, chunk by chunk. */
    public static RawHttp.Response post(int port, String target, byte[] body, String... extraHeaders) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.setSoTimeout(30_000);
            StringBuilder request = new StringBuilder("POST " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n")
                    .append("Content-Length: ").append(body.length).append("\r\n");
            for (String header : extraHeaders) {
                request.append(header).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            return RawHttp.readResponse(new BufferedInputStream(socket.getInputStream()));
        }
    }

    /** A multi-get's body: the keys, one per line. */
    public static byte[] keys(String... keys) {
        return (String.join("\n", keys) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    public static String putOp(String key, byte[] value) {
        return "{\"op\":\"put\",\"key\":\"" + base64(key) + "\",\"value\":\"" + Base64.getEncoder().encodeToString(value) + "\"}";
    }

    public static String deleteOp(String key) {
        return "{\"op\":\"delete\",\"key\":\"" + base64(key) + "\"}";
    }

    /** A batch's body: the operations, one per line. */
    public static byte[] batch(String... ops) {
        return (String.join("\n", ops) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    public static String base64(String key) {
        return Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The lines of an NDJSON answer. */
    public static List<String> lines(RawHttp.Response response) {
        List<String> lines = new ArrayList<>();
        for (String line : new String(response.body(), StandardCharsets.UTF_8).split("\n")) {
            if (!line.isEmpty()) {
                lines.add(line);
            }
        }
        return lines;
    }

    /** The chunks of a course-format answer, as text. */
    public static List<String> chunks(RawHttp.Response response) {
        return response.chunks().stream().map(chunk -> new String(chunk, StandardCharsets.UTF_8)).toList();
    }
}
