package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class RepairRequestTest {

    static final List<String> NODES = List.of("http://a:8080", "http://b:8080", "http://c:8080");

    @Test
    void aRequestReadsBackAsItWasWritten() {
        BitSet differing = new BitSet();
        differing.set(3);
        differing.set(1000);
        RepairRequest request = new RepairRequest(NODES, "http://c:8080", "http://a:8080", 1024, differing);

        RepairRequest decoded = RepairRequest.decode(ByteBuffer.wrap(request.encode()));

        assertThat(decoded).isEqualTo(request);
        assertThat(RepairRequest.decode(ByteBuffer.wrap(request.withDiffering(null).encode())).differing().isEmpty()).isTrue();
    }

    @Test
    void aTruncatedOrPaddedBodyIsRefusedWithAReason() {
        byte[] encoded = new RepairRequest(NODES, "http://a:8080", "http://b:8080", 64, new BitSet()).encode();
        for (int length = 0; length < encoded.length; length++) {
            byte[] cut = Arrays.copyOf(encoded, length);
            assertThatThrownBy(() -> RepairRequest.decode(ByteBuffer.wrap(cut))).isInstanceOf(IllegalArgumentException.class);
        }
        byte[] padded = Arrays.copyOf(encoded, encoded.length + 1);
        assertThatThrownBy(() -> RepairRequest.decode(ByteBuffer.wrap(padded))).hasMessageContaining("after its end");
    }

    @Test
    void nodesOutsideTheListAndBadBucketCountsAreRefused() {
        assertThatThrownBy(() -> new RepairRequest(NODES, "http://d:8080", "http://a:8080", 64, null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RepairRequest(NODES, "http://a:8080", "http://b:8080", 0, null))
                .hasMessageContaining("buckets");
        ByteBuffer manyBuckets = ByteBuffer.wrap(new RepairRequest(NODES, "http://a:8080", "http://b:8080", 64, null).encode());
        manyBuckets.putInt(0, Integer.MAX_VALUE);
        assertThatThrownBy(() -> RepairRequest.decode(manyBuckets)).hasMessageContaining("buckets");
    }
}
