package dev.kvlab.heal;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.heal.*}: how the cluster heals itself and follows its topology.
 *
 * @param hints   hinted handoff: writes a peer missed, kept and replayed
 * @param repair  anti-entropy: replicas compare what they hold and exchange what differs
 * @param handoff data that moves when the topology changes
 */
@Validated
@ConfigurationProperties("kvlab.heal")
public record HealingProperties(
        @NotNull @Valid @DefaultValue Hints hints,
        @NotNull @Valid @DefaultValue Repair repair,
        @NotNull @Valid @DefaultValue Handoff handoff) {

    /**
     * @param enabled          keep hints of writes a peer missed (failed or timed out) and replay them
     * @param maxBytesPerPeer  hints kept for one peer at the most; past it new ones are dropped (repair
     *                         brings the peer up to date)
     * @param window           a peer that has missed writes for longer than this gets no new hints
     * @param replayInterval   how often the node tries to replay the hints of each peer
     * @param replayRate       bytes of hints replayed to one peer per second at the most
     */
    public record Hints(
            @DefaultValue("true") boolean enabled,
            @NotNull @DefaultValue("64MB") DataSize maxBytesPerPeer,
            @NotNull @DefaultValue("3h") Duration window,
            @NotNull @DefaultValue("10s") Duration replayInterval,
            @NotNull @DefaultValue("4MB") DataSize replayRate) {
    }

    /**
     * @param enabled        run repair rounds with every peer in the background; switched off,
     *                       rounds run only on demand
     * @param interval       how long after a round with a peer the next one starts (rounds also run
     *                       at start, after a topology change, and on demand)
     * @param buckets        the buckets of key hashes both sides compare; only the keys of buckets
     *                       that differ are compared one by one
     * @param scanRate       keys a round reads from the store per second at the most: on both
     *                       sides, all the time a round runs, so it bounds what repair takes
     *                       from the foreground
     * @param rate           bytes of records a round sends and fetches per second at the most
     * @param tombstoneGrace how long after a delete its tombstone stays at least; it goes only once
     *                       a round with every other owner of its key has covered it
     * @param changedKeysMemory what the keys of records changed between two rounds may take: the
     *                       bucket hashes are kept up to date by reading those records again
     *                       only; past it, the next round reads every record once. 0 keeps no
     *                       hashes: every round reads every record
     */
    public record Repair(
            @DefaultValue("true") boolean enabled,
            @NotNull @DefaultValue("10m") Duration interval,
            @Min(1) @Max(1048576) @DefaultValue("1024") int buckets,
            @Min(1) @DefaultValue("20000") int scanRate,
            @NotNull @DefaultValue("8MB") DataSize rate,
            @NotNull @DefaultValue("24h") Duration tombstoneGrace,
            @NotNull @DefaultValue("16MB") DataSize changedKeysMemory) {
    }

    /**
     * @param interval how often the node looks for records it does not own (and tombstones whose
     *                 time has come) when the topology has not changed
     * @param settle   how long after a topology change the node waits before its records move,
     *                 so a change seen in steps moves them once
     * @param window   how long after a topology change a read of a key whose owners changed
     *                 also asks the owners of the topology before, while the data moves
     * @param scanRate keys a sweep (or a leaving node's pass) reads from the store per second at
     *                 the most: faster than repair's, as records that move are wanted soon
     */
    public record Handoff(
            @NotNull @DefaultValue("10m") Duration interval,
            @NotNull @DefaultValue("5s") Duration settle,
            @NotNull @DefaultValue("10m") Duration window,
            @Min(1) @DefaultValue("200000") int scanRate) {
    }
}
