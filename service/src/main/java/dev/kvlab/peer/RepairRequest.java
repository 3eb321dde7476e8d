package dev.kvlab.peer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * What a repair round asks of a peer ({@link ReplicaProtocol#REPAIR_BUCKETS_PATH},
 * {@link ReplicaProtocol#REPAIR_DIGESTS_PATH}): the two nodes, the topology the initiator reckons
 * ownership by (the peer refuses with 409 when its own differs), how many buckets the key hashes
 * fall into, and for digests which of them differ.
 *
 * <pre>
 * [buckets:4][node count:2]{[length:2][node]}*[initiator index:2][responder index:2][bitmap length:4][bitmap]
 * </pre>
 */
public record RepairRequest(List<String> nodes, String initiator, String responder, int buckets, BitSet differing) {

    static final int MAX_NODES = 4096;
    static final int MAX_BUCKETS = 1 << 20;

    public RepairRequest {
        if (!nodes.contains(initiator) || !nodes.contains(responder)) {
            throw new IllegalArgumentException("the initiator and the responder must be among the nodes");
        }
        if (buckets < 1 || buckets > MAX_BUCKETS) {
            throw new IllegalArgumentException("buckets must be within 1.." + MAX_BUCKETS + ", was " + buckets);
        }
    }

    public byte[] encode() {
        List<byte[]> names = nodes.stream().map(node -> node.getBytes(StandardCharsets.UTF_8)).toList();
        byte[] bitmap = differing == null ? new byte[0] : differing.toByteArray();
        int size = 4 + 2 + names.stream().mapToInt(name -> 2 + name.length).sum() + 2 + 2 + 4 + bitmap.length;
        ByteBuffer out = ByteBuffer.allocate(size).putInt(buckets).putShort((short) names.size());
        for (byte[] name : names) {
            out.putShort((short) name.length).put(name);
        }
        return out.putShort((short) nodes.indexOf(initiator)).putShort((short) nodes.indexOf(responder))
                .putInt(bitmap.length).put(bitmap).array();
    }

    /**
     * @throws IllegalArgumentException with a message for the caller when the body is not a request
     */
    public static RepairRequest decode(ByteBuffer body) {
        try {
            int buckets = body.getInt();
            int count = Short.toUnsignedInt(body.getShort());
            if (count < 1 || count > MAX_NODES) {
                throw new IllegalArgumentException("a repair request names " + count + " nodes");
            }
            List<String> nodes = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                byte[] name = new byte[Short.toUnsignedInt(body.getShort())];
                body.get(name);
                nodes.add(new String(name, StandardCharsets.UTF_8));
            }
            int initiator = Short.toUnsignedInt(body.getShort());
            int responder = Short.toUnsignedInt(body.getShort());
            int bitmapLength = body.getInt();
            if (initiator >= count || responder >= count || bitmapLength < 0 || bitmapLength > MAX_BUCKETS / 8 + 1) {
                throw new IllegalArgumentException("a repair request with bad indexes or bitmap");
            }
            byte[] bitmap = new byte[bitmapLength];
            body.get(bitmap);
            if (body.hasRemaining()) {
                throw new IllegalArgumentException("a repair request with bytes after its end");
            }
            return new RepairRequest(nodes, nodes.get(initiator), nodes.get(responder), buckets, BitSet.valueOf(bitmap));
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("a repair request cut short");
        }
    }

    /** The same request, asking for the digests of the {@code differing} buckets. */
    public RepairRequest withDiffering(BitSet differing) {
        return new RepairRequest(nodes, initiator, responder, buckets, differing);
    }
}
