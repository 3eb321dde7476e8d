package dev.kvlab.peer;

/**
 * The replica protocol's membership notices, signed as every peer call ({@link PeerAuthentication}),
 * each with the node's name (its base URL, as the topology names it) as its body: a node whose
 * leave is finished tells its peers it has left ({@link #LEFT_PATH}), and a node that starts to
 * serve tells them it has joined ({@link #JOINED_PATH}). Answered 204, or 409 when the peer does
 * not know the node named.
 */
final class MembershipCalls {

    static final String LEFT_PATH = "/internal/v1/membership/left";
    static final String JOINED_PATH = "/internal/v1/membership/joined";
    /** A node's name is a URL: a few hundred bytes at the most. */
    static final int MAX_BODY_BYTES = 2048;

    private MembershipCalls() {
    }
}
