package dev.kvlab.it.history;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks conditional PUTs against what kvlab promises for them at a quorum {@code ack/from} (such
 * as 2/3): the condition is checked against a quorum read, so
 *
 * <ul>
 *   <li>a PUT with {@code If-Match: T} that was written (201) never skipped a write: no write
 *       acknowledged before it began carries a version newer than {@code T};</li>
 *   <li>a create ({@code If-None-Match: *}) that was written began before any write of the key
 *       was acknowledged (the histories checked here have no deletes);</li>
 *   <li>a written PUT's new tag is newer than the tag it replaced;</li>
 *   <li>a 412 names the key's current tag, and for {@code If-Match} one other than the tag sent;
 *       it may name none (the key has no value) only when no write of the key was acknowledged
 *       before it began (a write that got no answer may have reached a replica or two).</li>
 * </ul>
 *
 * <p>Versions are known from the tags, {@code "<timestamp hex>-<node hex>"}, ordered by timestamp,
 * then node, as the service orders them. Only writes whose tag is known count, so every write of a
 * history checked here must be a conditional PUT (whose 201 carries its tag). Real-time order
 * needs no clock tolerance: the quorum read of a request that began after a write was acknowledged
 * meets that write's version or a newer one.
 */
public final class ConditionalWriteChecker {

    /** The violations found, each naming the offending writes; empty when the history is fine. */
    public List<String> violations(List<ConditionalWrite> history) {
        List<String> violations = new ArrayList<>();
        Map<String, List<ConditionalWrite>> byKey = history.stream().collect(Collectors.groupingBy(ConditionalWrite::key));
        byKey.forEach((key, writes) -> check(writes, violations));
        return violations;
    }

    private static void check(List<ConditionalWrite> writes, List<String> violations) {
        List<ConditionalWrite> acknowledged = writes.stream().filter(ConditionalWrite::written).toList();
        for (ConditionalWrite write : writes) {
            if (write.written()) {
                if (write.tag() == null) {
                    violations.add("a conditional PUT answered 201 without an ETag: " + write);
                    continue;
                }
                boolean create = ConditionalWrite.CREATE.equals(write.condition());
                if (!create && compare(write.tag(), write.condition()) <= 0) {
                    violations.add("a conditional PUT's new tag is not newer than the one it replaced: " + write);
                }
                for (ConditionalWrite earlier : acknowledged) {
                    if (earlier.end() < write.start() && (create || compare(earlier.tag(), write.condition()) > 0)) {
                        violations.add((create ? "a create passed although the key had been written: "
                                : "a conditional PUT passed on a stale tag: ") + write + "; acknowledged before it began: " + earlier);
                    }
                }
            } else if (write.refused()) {
                if (write.tag() == null) {
                    // "the key has no value": true only if no write of it was acknowledged before the request began.
                    acknowledged.stream().filter(earlier -> earlier.end() < write.start()).findFirst().ifPresent(earlier ->
                            violations.add("a 412 named no current tag: " + write + "; acknowledged before it began: " + earlier));
                } else if (write.tag().equals(write.condition())) {
                    violations.add("a 412 named the tag that was sent as the current one: " + write);
                }
            }
        }
    }

    /** Orders two tags {@code "<timestamp hex>-<node hex>"} by timestamp, then node (signed, as the service's versions). */
    static int compare(String a, String b) {
        long[] x = version(a);
        long[] y = version(b);
        int byTime = Long.compare(x[0], y[0]);
        return byTime != 0 ? byTime : Integer.compare((int) x[1], (int) y[1]);
    }

    private static long[] version(String tag) {
        String opaque = tag.startsWith("\"") && tag.endsWith("\"") && tag.length() >= 2 ? tag.substring(1, tag.length() - 1) : tag;
        int dash = opaque.indexOf('-');
        if (dash < 1) {
            throw new IllegalArgumentException("not a kvlab tag: " + tag);
        }
        return new long[] {Long.parseUnsignedLong(opaque.substring(0, dash), 16), Integer.parseUnsignedInt(opaque.substring(dash + 1), 16)};
    }
}
