package dev.kvlab.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An S3 store that accepts a connection and never answers does not hang a backup: the call times out. */
class S3TargetTimeoutTest {

    @Test
    void aStoreThatNeverAnswersFailsTheCallInTime() throws Exception {
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        held.add(silent.accept()); // read nothing, answer nothing
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            BackupProperties.S3 settings = new BackupProperties.S3("http://127.0.0.1:" + silent.getLocalPort(), "us-east-1",
                    true, "a", "", "b", "");
            S3Target.Timeouts timeouts = new S3Target.Timeouts(Duration.ofSeconds(1), Duration.ofSeconds(30),
                    Duration.ofSeconds(1), Duration.ofSeconds(3));
            long started = System.nanoTime();
            try (S3Target target = new S3Target(S3Target.client(settings, "a", "b", timeouts), "bucket", "", "silent",
                    S3Target.MULTIPART_THRESHOLD, S3Target.PART_BYTES, S3Target.LIST_PAGE)) {
                assertThatThrownBy(() -> target.read("blobs/x")).isInstanceOf(IOException.class);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
            silent.close();
            acceptor.join();
        } finally {
            for (Socket socket : held) {
                socket.close();
            }
        }
    }
}
