package dev.kvlab.heal;

import dev.kvlab.cluster.Topology;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.peer.MembershipClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * What this node tells its peers of its own membership, as Cassandra's gossip spreads a node's
 * LEFT state: that it serves, once it starts (so a peer that had taken it out after an earlier
 * leave takes it back at once), and, as it stops after a finished leave, that it has left (so
 * each peer takes it out of its topology at once instead of waiting for the listing to drop it).
 */
final class MembershipNotices implements BackgroundWork {

    private static final Logger log = LoggerFactory.getLogger(MembershipNotices.class);
    /** Tries of the notice that this node serves, a second apart: a peer may be starting too. */
    private static final int JOINED_TRIES = 10;

    private final TopologyProvider topology;
    private final MembershipClient peers;
    private final Handoff handoff;
    private volatile Disposable joining;

    MembershipNotices(TopologyProvider topology, MembershipClient peers, Handoff handoff) {
        this.topology = topology;
        this.peers = peers;
        this.handoff = handoff;
    }

    /** Tells every peer that this node serves, in the background. */
    @Override
    public void start() {
        Topology current = topology.current();
        joining = Flux.fromIterable(peersOf(current))
                .flatMap(peer -> peers.joined(peer, current.self())
                        .retryWhen(Retry.fixedDelay(JOINED_TRIES - 1, Duration.ofSeconds(1)))
                        .onErrorResume(error -> {
                            log.debug("could not tell {} that this node serves: {}", peer, error.toString());
                            return Mono.empty();
                        }))
                .subscribe();
    }

    /**
     * As the node stops: when its leave is finished (a complete pass handed every record to the
     * nodes that stay), tells every peer it has left, before its servers drain; {@code done} runs
     * once each peer answered or its call failed. The writes it still takes go to their owners as
     * they come and in its last pass ({@link Handoff#lastPass}).
     */
    void leftAsStopping(Runnable done) {
        Leave leave = handoff.leaving();
        if (leave == null || leave.passes() == 0 || leave.lastPass().failed() > 0) {
            if (leave != null) {
                log.info("leaving: stopping before a pass handed every record over; the peers keep this node until the listing drops it");
            }
            done.run();
            return;
        }
        Topology current = topology.current();
        List<String> others = peersOf(current);
        AtomicInteger told = new AtomicInteger();
        Flux.fromIterable(others)
                .flatMap(peer -> peers.left(peer, current.self())
                        .doOnSuccess(answered -> told.incrementAndGet())
                        .onErrorResume(error -> {
                            log.warn("leaving: could not tell {} that this node has left: {}", peer, error.toString());
                            return Mono.empty();
                        }))
                .doFinally(signal -> {
                    log.info("leaving: told {} of {} peers that this node has left the cluster", told.get(), others.size());
                    done.run();
                })
                .subscribe();
    }

    private static List<String> peersOf(Topology current) {
        return current.nodes().stream().filter(node -> !node.equals(current.self())).toList();
    }

    @Override
    public void close() {
        Disposable running = joining;
        if (running != null) {
            running.dispose();
        }
    }
}
