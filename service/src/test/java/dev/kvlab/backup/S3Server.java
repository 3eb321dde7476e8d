package dev.kvlab.backup;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The real S3-compatible server of the tests: SeaweedFS, started by {@code scripts/s3-server.sh}
 * (which builds it from its Go module the first time) on free ports, with a bucket {@code kvlab}
 * and keys only the tests know. One per test class.
 */
final class S3Server implements AutoCloseable {

    static final String BUCKET = "kvlab";
    static final String ACCESS_KEY = "kvlab-test-access";
    static final String SECRET_KEY = "kvlab-test-secret-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    private static final Path SCRIPT = projectRoot().resolve("scripts/s3-server.sh");

    final Path dir;
    final String endpoint;

    private S3Server(Path dir, String endpoint) {
        this.dir = dir;
        this.endpoint = endpoint;
    }

    static S3Server start(Path dir) throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePorts();
            try {
                run(List.of(SCRIPT.toString(), "start", dir.toString(), Integer.toString(port)), 900);
                return new S3Server(dir, "http://127.0.0.1:" + port);
            } catch (IOException e) {
                last = e; // a port taken meanwhile: another one
            }
        }
        throw last;
    }

    BackupProperties.S3 settings(String accessKey, String secretKey) {
        return new BackupProperties.S3(endpoint, "us-east-1", true, accessKey, "", secretKey, "");
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run(List.of(SCRIPT.toString(), "stop", dir.toString()), 60);
    }

    /** A port P such that P to P+3 and P+10000 to P+10003 are free on 127.0.0.1, as the script needs them. */
    private static int freePorts() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(20_000, 45_000);
            if (free(port) && free(port + 1) && free(port + 2) && free(port + 3) && free(port + 10_000)
                    && free(port + 10_001) && free(port + 10_002) && free(port + 10_003)) {
                return port;
            }
        }
        throw new IOException("no free ports for the S3 server");
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void run(List<String> command, int timeoutSeconds) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> env = builder.environment();
        env.put("S3_ACCESS_KEY", ACCESS_KEY);
        env.put("S3_SECRET_KEY", SECRET_KEY);
        env.put("BUCKET", BUCKET);
        env.put("PATH", env.getOrDefault("PATH", "/usr/bin:/bin") + ":/usr/local/go/bin");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(command + " took more than " + timeoutSeconds + " s:\n" + output);
        }
        if (process.exitValue() != 0) {
            throw new IOException(command + " failed (" + process.exitValue() + "):\n" + output);
        }
    }

    private static Path projectRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("scripts/s3-server.sh"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("scripts/s3-server.sh not found above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }
}
