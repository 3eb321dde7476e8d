package dev.kvlab.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of request bodies a node holds at once, across all its connections. Each body takes
 * its share as it is read and gives it back when its request is done. Without this bound, enough
 * clients writing large values at once exhaust the heap, and the node dies instead of answering
 * {@code 503}.
 */
public final class BodyBudget {

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    public BodyBudget(long limit) {
        this.limit = limit;
    }

    /** A share for one request: empty, then grown as its body arrives. */
    public Lease lease() {
        return new Lease();
    }

    public long limit() {
        return limit;
    }

    /** The bytes held now by all requests. */
    public long held() {
        return held.get();
    }

    /** One request's share of the budget. Grown on its connection's event loop, released once when the request ends. */
    public final class Lease {

        private long bytes;

        private Lease() {
        }

        /** Takes {@code more} bytes of the budget; false, and nothing taken, when that would go over the limit. */
        public boolean hold(long more) {
            long current;
            do {
                current = held.get();
                if (current + more > limit) {
                    return false;
                }
            } while (!held.compareAndSet(current, current + more));
            bytes += more;
            return true;
        }

        /** Gives back all the bytes this lease holds. */
        public void release() {
            held.addAndGet(-bytes);
            bytes = 0;
        }
    }
}
