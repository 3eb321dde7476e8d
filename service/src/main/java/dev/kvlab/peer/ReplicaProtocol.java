package dev.kvlab.peer;

/**
 * How nodes talk to each other's replicas, under {@code /internal/v1/}, apart from the client API
 * so a replica request never fans out again. Every call is signed for the node it is sent to, with
 * its body and a nonce taken once ({@link PeerAuthentication}):
 *
 * <ul>
 *   <li>{@code POST /internal/v1/batch} runs many single-key reads and writes in one request and
 *       one storage task, answered in order (200): how coordinators reach replicas with
 *       {@code kvlab.replication.batch.stream=false}
 *       ({@link ReplicaBatch}, {@link PeerBatcher});</li>
 *   <li>{@code POST /internal/v1/stream} does the same for a stream of batches on one long-lived
 *       request: the body is a stream of batch frames, the answer (200) a stream of their answers'
 *       frames in the same order ({@link BatchFrames}). How coordinators reach replicas by default
 *       ({@link PeerStream}); a replica that is stopping ends its streams once it has answered what
 *       it read;</li>
 *   <li>{@code GET /internal/v1/record?id=} answers 200 with the record's value (a tombstone's is
 *       empty) or 404 when the replica never saw the key; the version and the tombstone flag
 *       travel in headers;</li>
 *   <li>{@code PUT /internal/v1/record?id=} stores the body under the version header (201);</li>
 *   <li>{@code DELETE /internal/v1/record?id=} stores a tombstone under the version header (202)
 *       (these three single calls are there for people and tools looking at one replica);</li>
 *   <li>{@code POST /internal/v1/repair/buckets}, {@code .../digests} and {@code .../done}: a
 *       repair round ({@link RepairRequest}): the bucket hashes of the records two nodes share
 *       (200: buckets of 8 bytes; 409 when the peer reckons by another topology), the keys and
 *       headers of the shared records of the buckets that differ, streamed as {@link RecordFrames}
 *       whose records are headers alone, and the round's end ({@code [initiator length:2]
 *       [initiator][started ms:8]}, 204; 400 for a start after the report was signed or more
 *       than a day before it);</li>
 *   <li>{@code GET /internal/v1/records?start=&end=} streams the replica's records, tombstones
 *       included, in key order, each framed as {@code [key length:4][key][record length:4][record]},
 *       the record in its stored form ({@link RecordFrames}).</li>
 * </ul>
 */
public final class ReplicaProtocol {

    public static final String RECORD_PATH = "/internal/v1/record";
    public static final String RECORDS_PATH = "/internal/v1/records";
    public static final String BATCH_PATH = "/internal/v1/batch";
    public static final String STREAM_PATH = "/internal/v1/stream";
    /** Repair, a round's first step: the hashes of the buckets of the records both nodes share. */
    public static final String REPAIR_BUCKETS_PATH = "/internal/v1/repair/buckets";
    /** Repair, a round's second step: the keys and headers of the shared records in differing buckets. */
    public static final String REPAIR_DIGESTS_PATH = "/internal/v1/repair/digests";
    /**
     * Repair, a round's first step when both sides keep their changes: the bucket hashes with the keys
     * changed recently ({@link RepairChanges}); a node without this path answers 404, and the round
     * falls back to the bucket hashes and a scan of the differing buckets.
     */
    public static final String REPAIR_CHANGES_PATH = "/internal/v1/repair/changes";
    /** Repair, a round's end: the responder learns that the round covered what they share. */
    public static final String REPAIR_DONE_PATH = "/internal/v1/repair/done";
    public static final String VERSION_HEADER = "X-Kvlab-Version";
    public static final String TOMBSTONE_HEADER = "X-Kvlab-Tombstone";
    /** On a replica's record that expires: when, in milliseconds since the epoch (its value is kept until reaped). */
    public static final String EXPIRES_AT_HEADER = "X-Kvlab-Expires-At";
    /** The content type of a records stream. */
    public static final String RECORDS_MEDIA_TYPE = "application/x-kvlab-records";

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private ReplicaProtocol() {
    }

    /** A key as a query value: unreserved ASCII as is, every other byte percent-encoded. */
    public static String encodeKey(byte[] key) {
        StringBuilder encoded = new StringBuilder(key.length * 3);
        for (byte b : key) {
            int c = b & 0xff;
            if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
                encoded.append((char) c);
            } else {
                encoded.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return encoded.toString();
    }
}
