package dev.kvlab.peer;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The nonces of the signed calls a node took, remembered while their signatures are within the
 * clock skew, so none is taken twice. A nonce is a signer's session (random, chosen once per
 * signer) and a sequence number the signer counts per target node; the window keeps, per session,
 * the highest number taken and a bitmap of the {@link #WINDOW} numbers below it, as IPsec and DTLS
 * do (RFC 4303, RFC 6347): a number seen already, or older than the bitmap, is a replay.
 *
 * <p>Why sequences and not a set of random nonces: memory grows with the number of signers (the
 * cluster's nodes, and tools run by hand), not with the request rate times the skew, so it stays a
 * few hundred bytes per node at any load. A session is forgotten once every call it signed is
 * outside the skew (its latest signature older than the skew): replaying one of them is refused
 * by its time already. At most {@link #MAX_SESSIONS} sessions are remembered; beyond that a new
 * one is refused (503) rather than an old one forgotten early.
 */
final class ReplayWindow {

    /** Calls of one signer to one node that may arrive out of order, in sequence numbers. */
    static final int WINDOW = 2048;
    /** Signers remembered at once: about 600 bytes each, a few MiB at most. */
    static final int MAX_SESSIONS = 4096;

    enum Verdict { FRESH, REPLAYED, TOO_OLD, FULL }

    private final long maxSkewMillis;
    private final int maxSessions;
    /** In the order sessions last signed a call, so those gone quiet are found first. */
    private final LinkedHashMap<Long, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);

    ReplayWindow(long maxSkewMillis) {
        this(maxSkewMillis, MAX_SESSIONS);
    }

    ReplayWindow(long maxSkewMillis, int maxSessions) {
        this.maxSkewMillis = maxSkewMillis;
        this.maxSessions = maxSessions;
    }

    /** Takes the nonce (session, sequence) of a call signed at {@code signedMillis}, unless seen already. */
    synchronized Verdict accept(long session, long sequence, long signedMillis, long nowMillis) {
        Session known = sessions.get(session);
        if (known == null) {
            forgetQuiet(nowMillis, false);
            if (sessions.size() >= maxSessions) {
                forgetQuiet(nowMillis, true);
                if (sessions.size() >= maxSessions) {
                    return Verdict.FULL;
                }
            }
            known = new Session(sequence);
            sessions.put(session, known);
        } else {
            Verdict verdict = known.take(sequence);
            if (verdict != Verdict.FRESH) {
                return verdict;
            }
        }
        known.latestSignedMillis = Math.max(known.latestSignedMillis, signedMillis);
        return Verdict.FRESH;
    }

    /** Sessions remembered now. */
    synchronized int sessions() {
        return sessions.size();
    }

    /**
     * Forgets the sessions whose calls are all outside the skew now: from the quietest on until one
     * is not, or (when {@code all}) every one of them.
     */
    private void forgetQuiet(long nowMillis, boolean all) {
        Iterator<Map.Entry<Long, Session>> quietest = sessions.entrySet().iterator();
        while (quietest.hasNext()) {
            if (quietest.next().getValue().latestSignedMillis + maxSkewMillis < nowMillis) {
                quietest.remove();
            } else if (!all) {
                return;
            }
        }
    }

    /** One signer's numbers: the highest taken, and which of the {@link #WINDOW} below it were. */
    private static final class Session {
        private final long[] seen = new long[WINDOW / Long.SIZE];
        private long highest;
        private long latestSignedMillis = Long.MIN_VALUE;

        Session(long first) {
            highest = first;
            mark(first);
        }

        Verdict take(long sequence) {
            if (sequence > highest) {
                if (sequence - highest >= WINDOW) {
                    java.util.Arrays.fill(seen, 0);
                } else {
                    for (long s = highest + 1; s < sequence; s++) {
                        clear(s);
                    }
                }
                highest = sequence;
                mark(sequence);
                return Verdict.FRESH;
            }
            if (highest - sequence >= WINDOW) {
                return Verdict.TOO_OLD;
            }
            if (marked(sequence)) {
                return Verdict.REPLAYED;
            }
            mark(sequence);
            return Verdict.FRESH;
        }

        private int bit(long sequence) {
            return (int) Math.floorMod(sequence, (long) WINDOW);
        }

        private void mark(long sequence) {
            int bit = bit(sequence);
            seen[bit >>> 6] |= 1L << (bit & 63);
        }

        private void clear(long sequence) {
            int bit = bit(sequence);
            seen[bit >>> 6] &= ~(1L << (bit & 63));
        }

        private boolean marked(long sequence) {
            int bit = bit(sequence);
            return (seen[bit >>> 6] & 1L << (bit & 63)) != 0;
        }
    }
}
