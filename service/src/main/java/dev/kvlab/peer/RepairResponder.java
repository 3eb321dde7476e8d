package dev.kvlab.peer;

import dev.kvlab.http.ConflictException;
import dev.kvlab.storage.RecordHeader;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The peer's side of a repair round, which the replica protocol serves ({@link ReplicaHandler}). */
public interface RepairResponder {

    /**
     * The hash of each bucket of the records this node shares with the initiator under the
     * request's topology; fails with {@link TopologyMismatchException} when this node's differs.
     */
    Mono<long[]> buckets(RepairRequest request);

    /**
     * The bucket hashes with the keys changed recently and the headers of the keys asked for, all at
     * one snapshot ({@link RepairChanges}); no key known when this node does not keep its changes.
     */
    Mono<RepairChanges> changes(RepairChanges.Request request);

    /** The keys and headers of the shared records in the request's differing buckets, in key order. */
    Flux<RecordHeader.Keyed> digests(RepairRequest request);

    /** The initiator finished a round that began at {@code startedMillis}: both sides know it for tombstones. */
    void roundDone(String initiator, long startedMillis);

    /** Thrown when the peer reckons ownership by another topology: the round waits until they agree (409). */
    final class TopologyMismatchException extends ConflictException {
        public TopologyMismatchException(String message) {
            super(message);
        }
    }
}
