package dev.kvlab.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.testing.TestDnsServer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** DNS discovery against a real DNS server under the test's control. */
class DnsTopologyProviderTest {

    static final String SERVICE = "kvlab-headless.lab.svc.cluster.local";

    TestDnsServer dns;
    MutableClock clock = new MutableClock();

    @BeforeEach
    void startDns() throws Exception {
        dns = new TestDnsServer();
    }

    @AfterEach
    void stopDns() throws Exception {
        dns.close();
    }

    @Test
    void everyPodOfTheSetIsANodeInOrdinalOrder() throws Exception {
        publishPods(0, 1, 2);

        Topology topology = provider("kvlab-1", 0).current();

        assertThat(topology.nodes()).containsExactly(url(0), url(1), url(2));
        assertThat(topology.self()).isEqualTo(url(1));
    }

    @Test
    void everyPodComputesTheSameNodeList() throws Exception {
        publishPods(0, 1, 2);

        assertThat(provider("kvlab-0", 0).current().nodes())
                .isEqualTo(provider("kvlab-2", 0).current().nodes());
    }

    @Test
    void scalingUpIsSeenAtTheNextRefresh() throws Exception {
        publishPods(0, 1, 2);
        DnsTopologyProvider provider = provider("kvlab-0", 0);

        publishPods(0, 1, 2, 3, 4);
        provider.refresh();

        assertThat(provider.current().size()).isEqualTo(5);
    }

    @Test
    void aPodMissingBelowTheTopDoesNotChangeTheSize() throws Exception {
        publishPods(0, 1, 2);
        DnsTopologyProvider provider = provider("kvlab-0", 0);

        publishPods(0, 2);
        provider.refresh();

        assertThat(provider.current().size()).isEqualTo(3);
    }

    @Test
    void scalingDownWaitsUntilDnsHasShownItLongEnough() throws Exception {
        publishPods(0, 1, 2, 3, 4);
        DnsTopologyProvider provider = provider("kvlab-0", 0);

        publishPods(0, 1, 2);
        provider.refresh();
        clock.advance(Duration.ofSeconds(30));
        provider.refresh();
        assertThat(provider.current().size()).as("after 30 s").isEqualTo(5);

        clock.advance(Duration.ofSeconds(31));
        provider.refresh();
        assertThat(provider.current().size()).as("after 61 s").isEqualTo(3);
    }

    @Test
    void aPodThatComesBackInTimeCancelsTheShrink() throws Exception {
        publishPods(0, 1, 2);
        DnsTopologyProvider provider = provider("kvlab-0", 0);

        publishPods(0, 1);
        provider.refresh();
        clock.advance(Duration.ofSeconds(40));
        publishPods(0, 1, 2);
        provider.refresh();
        publishPods(0, 1);
        clock.advance(Duration.ofSeconds(40));
        provider.refresh();

        assertThat(provider.current().size()).isEqualTo(3);
    }

    @Test
    void whenDnsIsSilentTheLastTopologyStays() throws Exception {
        publishPods(0, 1, 2);
        DnsTopologyProvider provider = provider("kvlab-0", 0);

        dns.silent(true);
        provider.refresh();

        assertThat(provider.current().size()).isEqualTo(3);
    }

    @Test
    void beforeDnsAnswersThisPodAndThoseBelowItAreTheCluster() {
        dns.silent(true);

        assertThat(provider("kvlab-2", 0).current().nodes()).containsExactly(url(0), url(1), url(2));
    }

    @Test
    void aConfiguredSizeWinsOverDns() throws Exception {
        publishPods(0, 1);

        assertThat(provider("kvlab-0", 4).current().size()).isEqualTo(4);
    }

    @Test
    void targetsOfOtherSetsOrServicesAreIgnored() throws Exception {
        dns.srv(SERVICE, List.of("kvlab-0." + SERVICE, "kvlab-1." + SERVICE, "other-7." + SERVICE, "kvlab-9.elsewhere.svc.cluster.local"));

        assertThat(provider("kvlab-0", 0).current().size()).isEqualTo(2);
    }

    @Test
    void aPodNameThatIsNotAStatefulSetPodIsRejectedAtStartUp() {
        assertThatThrownBy(() -> provider("laptop", 0)).hasMessageContaining("<set>-<ordinal>");
    }

    private DnsTopologyProvider provider(String podName, int replicas) {
        ClusterProperties.Dns settings = new ClusterProperties.Dns(SERVICE, podName, "http", 8080, replicas,
                Duration.ofSeconds(5), Duration.ofSeconds(60), Duration.ofSeconds(120), dns.address());
        DnsTopologyProvider provider = new DnsTopologyProvider(settings, 8080,
                new DnsjavaSrvLookup(settings.server(), Duration.ofMillis(300)), clock);
        provider.refresh();
        return provider;
    }

    private void publishPods(int... ordinals) throws Exception {
        List<String> targets = new ArrayList<>();
        for (int ordinal : ordinals) {
            targets.add("kvlab-" + ordinal + "." + SERVICE);
        }
        dns.srv(SERVICE, targets);
    }

    private static String url(int ordinal) {
        return "http://kvlab-" + ordinal + "." + SERVICE + ":8080";
    }

    static final class MutableClock extends Clock {

        private Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
