package dev.kvlab.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * HTTP/1.1 over a plain socket, for what ordinary clients hide: the chunks of a chunked body.
 */
public final class RawHttp {

    public record Response(int status, Map<String, String> headers, List<byte[]> chunks) {

        public byte[] body() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            chunks.forEach(out::writeBytes);
            return out.toByteArray();
        }
    }

    private RawHttp() {
    }

    /** Sends {@code GET target} and reads the whole response; the target is sent as given (raw, encoded). */
    public static Response get(int port, String target, String... extraHeaders) throws IOException {
        List<byte[]> chunks = new ArrayList<>();
        Response head = stream(port, target, chunks::add, extraHeaders);
        return new Response(head.status(), head.headers(), chunks);
    }

    /**
     * Sends {@code GET target} and hands each chunk of the body to {@code onChunk} as it arrives,
     * keeping none: for bodies larger than the test should hold. The returned response has no chunks.
     * The socket's receive buffer is small, so a reader that pauses soon holds the server back
     * instead of letting the kernel buffer tens of megabytes.
     */
    public static Response stream(int port, String target, Consumer<byte[]> onChunk, String... extraHeaders) throws IOException {
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(64 * 1024);
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.setSoTimeout(30_000);
            StringBuilder request = new StringBuilder("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
            for (String header : extraHeaders) {
                request.append(header).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()), onChunk);
        }
    }

    /**
     * Sends {@code PUT target} with the whole body (chunked, in 64 KiB chunks, or with its
     * Content-Length) before reading anything, as a simple client does, then reads the response.
     */
    public static Response put(int port, String target, byte[] body, boolean chunked) throws IOException {
        try (Socket socket = new Socket()) {
            socket.setSendBufferSize(64 * 1024);
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            String framing = chunked ? "Transfer-Encoding: chunked" : "Content-Length: " + body.length;
            out.write(("PUT " + target + " HTTP/1.1\r\nHost: localhost\r\n" + framing + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            if (chunked) {
                for (int from = 0; from < body.length; from += 64 * 1024) {
                    int size = Math.min(64 * 1024, body.length - from);
                    out.write((Integer.toHexString(size) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    out.write(body, from, size);
                    out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            } else {
                out.write(body);
            }
            out.flush();
            return readResponse(socket.getInputStream());
        }
    }

    /** Reads one whole response from a socket the caller wrote its request to. */
    public static Response readResponse(InputStream in) throws IOException {
        List<byte[]> chunks = new ArrayList<>();
        Response head = read(new BufferedInputStream(in), chunks::add);
        return new Response(head.status(), head.headers(), chunks);
    }

    private static Response read(InputStream in, Consumer<byte[]> onChunk) throws IOException {
        String statusLine = line(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            int colon = header.indexOf(':');
            headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
        }
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int size = chunkSize(in); size > 0; size = chunkSize(in)) {
                onChunk.accept(in.readNBytes(size));
                line(in);
            }
        } else if (headers.containsKey("content-length")) {
            onChunk.accept(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        } else {
            onChunk.accept(in.readAllBytes());
        }
        return new Response(status, headers, List.of());
    }

    private static int chunkSize(InputStream in) throws IOException {
        String line = line(in);
        int semicolon = line.indexOf(';');
        return Integer.parseInt(semicolon < 0 ? line : line.substring(0, semicolon), 16);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("connection closed in the middle of a line");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }
}
