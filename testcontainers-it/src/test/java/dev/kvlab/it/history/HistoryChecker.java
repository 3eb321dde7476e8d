package dev.kvlab.it.history;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks a history of quorum reads and writes against what kvlab promises for {@code ack/from}
 * with a quorum on both sides (for example 2/3): last write wins by version, versions follow real
 * time, so
 *
 * <ul>
 *   <li>an acknowledged write is seen by every read that starts after it was acknowledged, unless
 *       a later or concurrent write replaced it;</li>
 *   <li>a deleted value never comes back: after an acknowledged delete, a read returns 404 or a
 *       value written later or concurrently;</li>
 *   <li>a read returns only values that some PUT wrote.</li>
 * </ul>
 *
 * <p>"Later" is by the versions' clock: a write's version is taken by its coordinator while the
 * client waits, so a write that ended before another started has the older version, as long as
 * they are more than {@code clockResolution} apart (versions have millisecond resolution across
 * nodes). Writes that were not acknowledged (504, lost connection) may have taken effect, so they
 * are admissible answers, but they never count as acknowledged. Where nodes are paused, such a write
 * may even take its version after its client gave up (the coordinator resumes and writes under the
 * time it resumes at): {@link #withPausedNodes} then never counts it older than a later write.
 */
public final class HistoryChecker {

    private final long tolerance;
    private final boolean pausedNodes;

    public HistoryChecker(Duration clockResolution) {
        this(clockResolution, false);
    }

    private HistoryChecker(Duration clockResolution, boolean pausedNodes) {
        this.tolerance = clockResolution.toNanos();
        this.pausedNodes = pausedNodes;
    }

    /** A checker for a history during which nodes were paused (SIGSTOP) and resumed. */
    public static HistoryChecker withPausedNodes(Duration clockResolution) {
        return new HistoryChecker(clockResolution, true);
    }

    /** The violations found, each naming the offending operations; empty when the history is fine. */
    public List<String> violations(List<Operation> history) {
        Map<String, List<Operation>> byKey = history.stream().collect(Collectors.groupingBy(Operation::key));
        List<String> violations = new ArrayList<>();
        byKey.forEach((key, operations) -> check(operations, violations));
        return violations;
    }

    private void check(List<Operation> operations, List<String> violations) {
        List<Operation> writes = operations.stream().filter(Operation::isWrite).toList();
        Map<String, Operation> putsByValue = new HashMap<>();
        for (Operation write : writes) {
            if (write.type() == Operation.Type.PUT) {
                putsByValue.put(write.value(), write);
            }
        }
        for (Operation read : operations) {
            if (read.type() != Operation.Type.GET || !read.acknowledged()) {
                continue;
            }
            Operation mustSee = latestAcknowledgedBefore(writes, read);
            if (read.value() != null) {
                Operation source = putsByValue.get(read.value());
                if (source == null) {
                    violations.add("a read returned a value no PUT wrote: " + read);
                } else if (source.start() > read.end()) {
                    violations.add("a read returned a value written after it ended: " + read + "; written by " + source);
                } else if (mustSee != null && source != mustSee && before(source, mustSee)) {
                    violations.add((mustSee.type() == Operation.Type.DELETE ? "a deleted value came back: " : "a stale read: ")
                            + read + " returned the value of " + source + ", older than the acknowledged " + mustSee);
                }
            } else if (mustSee != null && mustSee.type() == Operation.Type.PUT && !aDeleteMayExplain(writes, read, mustSee)) {
                violations.add("an acknowledged write was lost: " + read + " found nothing after " + mustSee);
            }
        }
    }

    /** Among acknowledged writes that ended before the read started, the one that started last. */
    private static Operation latestAcknowledgedBefore(List<Operation> writes, Operation read) {
        Operation latest = null;
        for (Operation write : writes) {
            if (write.acknowledged() && write.end() < read.start() && (latest == null || write.start() > latest.start())) {
                latest = write;
            }
        }
        return latest;
    }

    /** A 404 is fine if some delete, acknowledged or not, may be newer than the write the read had to see. */
    private boolean aDeleteMayExplain(List<Operation> writes, Operation read, Operation mustSee) {
        for (Operation write : writes) {
            if (write.type() == Operation.Type.DELETE && write.start() < read.end() && !before(write, mustSee)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code a} certainly has the older version: it ended before {@code b} started, by more than the
     * clock's resolution, and, where nodes are paused, it was acknowledged (a write that was not may
     * take its version once its paused coordinator resumes, after anything that followed it).
     */
    private boolean before(Operation a, Operation b) {
        return (a.acknowledged() || !pausedNodes) && a.end() + tolerance < b.start();
    }
}
