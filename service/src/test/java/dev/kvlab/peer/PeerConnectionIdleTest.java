package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A pooled peer connection is let go before the peer's own idle timeout closes it under a replica call. */
class PeerConnectionIdleTest {

    @Test
    void thePoolKeepsAPeerConnectionIdleForHalfThePeersIdleTimeoutAtMost() {
        assertThat(PeerConfiguration.peerConnectionMaxIdle(Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(500));
        assertThat(PeerConfiguration.peerConnectionMaxIdle(Duration.ofSeconds(20))).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aLongOrNoIdleTimeoutKeepsTheDefault() {
        assertThat(PeerConfiguration.peerConnectionMaxIdle(Duration.ofSeconds(60))).isEqualTo(Duration.ofSeconds(30));
        assertThat(PeerConfiguration.peerConnectionMaxIdle(null)).isEqualTo(Duration.ofSeconds(30));
        assertThat(PeerConfiguration.peerConnectionMaxIdle(Duration.ZERO)).isEqualTo(Duration.ofSeconds(30));
    }
}
