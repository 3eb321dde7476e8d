package dev.kvlab.cluster;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nodes of a StatefulSet, from its headless service's DNS. Pod {@code <set>-<i>} is node
 * {@code <scheme>://<set>-<i>.<service>:<port>}; the set's size is configured, or read from the
 * service's SRV records as one more than the highest ordinal seen (this node's included), so a pod
 * that is briefly missing below the top does not change the size. Growth is taken at once; a smaller
 * size only after DNS has shown it for {@code shrinkAfter}. DNS is read again every
 * {@code refreshInterval} on a thread of its own; when it fails, the last topology stays.
 */
public final class DnsTopologyProvider implements TopologyProvider, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DnsTopologyProvider.class);
    private static final Pattern POD = Pattern.compile("(.+)-(\\d+)");

    private final String service;
    private final String set;
    private final int selfOrdinal;
    private final String scheme;
    private final int port;
    private final int fixedSize;
    private final Duration shrinkAfter;
    private final SrvLookup lookup;
    private final Clock clock;
    private final AtomicReference<Topology> current = new AtomicReference<>();
    private ScheduledExecutorService refresher;
    /** Since when DNS has shown a size below the current one; null while it has not. */
    private Instant smallerSince;

    public DnsTopologyProvider(ClusterProperties.Dns dns, int defaultPort, SrvLookup lookup, Clock clock) {
        if (dns.service() == null || dns.service().isBlank()) {
            throw new IllegalArgumentException("kvlab.cluster.dns.service must name the headless service when kvlab.cluster.discovery=dns");
        }
        Matcher pod = POD.matcher(dns.podName() == null ? "" : dns.podName());
        if (!pod.matches()) {
            throw new IllegalArgumentException("kvlab.cluster.dns.pod-name (default $HOSTNAME) must be a StatefulSet pod name <set>-<ordinal>, was '"
                    + dns.podName() + "'");
        }
        this.service = trimDot(dns.service().toLowerCase(Locale.ROOT));
        this.set = pod.group(1);
        this.selfOrdinal = Integer.parseInt(pod.group(2));
        this.scheme = dns.scheme();
        this.port = dns.port() > 0 ? dns.port() : defaultPort;
        this.fixedSize = dns.replicas();
        this.shrinkAfter = dns.shrinkAfter();
        this.lookup = lookup;
        this.clock = clock;
        if (fixedSize > 0 && selfOrdinal >= fixedSize) {
            throw new IllegalArgumentException("pod " + dns.podName() + " is outside kvlab.cluster.dns.replicas=" + fixedSize);
        }
        current.set(topologyOf(fixedSize > 0 ? fixedSize : selfOrdinal + 1));
    }

    /** Reads DNS now, then every {@code interval} in the background. */
    public DnsTopologyProvider start(Duration interval) {
        refresh();
        refresher = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "kvlab-topology");
            thread.setDaemon(true);
            return thread;
        });
        refresher.scheduleWithFixedDelay(this::refresh, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    @Override
    public Topology current() {
        return current.get();
    }

    /** Reads DNS once and updates the topology; keeps the last one when DNS fails. */
    public void refresh() {
        if (fixedSize > 0) {
            return;
        }
        int seen;
        try {
            seen = sizeSeen(lookup.targets(service));
        } catch (Exception e) {
            log.warn("cannot read the cluster from DNS ({}); keeping {}", e.getMessage(), current.get());
            return;
        }
        int size = current.get().size();
        if (seen >= size) {
            smallerSince = null;
            if (seen > size) {
                apply(seen);
            }
            return;
        }
        Instant now = clock.instant();
        if (smallerSince == null) {
            smallerSince = now;
            log.info("DNS shows {} of {} nodes; shrinking only if that lasts {}", seen, size, shrinkAfter);
        } else if (!now.isBefore(smallerSince.plus(shrinkAfter))) {
            smallerSince = null;
            apply(seen);
        }
    }

    /** One more than the highest ordinal among the targets that are pods of this set, and at least this node. */
    private int sizeSeen(List<String> targets) {
        int highest = selfOrdinal;
        String suffix = "." + service;
        for (String target : targets) {
            String host = trimDot(target.toLowerCase(Locale.ROOT));
            if (!host.endsWith(suffix)) {
                continue;
            }
            Matcher pod = POD.matcher(host.substring(0, host.length() - suffix.length()));
            if (pod.matches() && pod.group(1).equals(set)) {
                highest = Math.max(highest, Integer.parseInt(pod.group(2)));
            }
        }
        return highest + 1;
    }

    private void apply(int size) {
        Topology next = topologyOf(size);
        log.info("cluster topology is now {}", next);
        current.set(next);
    }

    private Topology topologyOf(int size) {
        List<String> nodes = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            nodes.add(nodeUrl(i));
        }
        return new Topology(nodes, nodeUrl(selfOrdinal));
    }

    private String nodeUrl(int ordinal) {
        return scheme + "://" + set + "-" + ordinal + "." + service + ":" + port;
    }

    private static String trimDot(String name) {
        return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
    }

    @Override
    public void close() {
        if (refresher != null) {
            refresher.shutdownNow();
        }
    }
}
