package dev.kvlab.peer;

import dev.kvlab.replication.ReplicaException;
import java.nio.charset.StandardCharsets;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientResponse;
import reactor.core.publisher.Mono;

/** A peer's answer other than 200, as the failure of the call: its status and the first line of why. */
final class RefusedCall {

    /** A peer's error answers are one short line; more is cut. */
    private static final int MAX_REASON_BYTES = 1024;

    private RefusedCall() {
    }

    /** Fails with a {@link ReplicaException} naming the peer, the status and the peer's reason. */
    static <T> Mono<T> of(String node, ClientResponse response) {
        int status = response.statusCode().value();
        return DataBufferUtils.join(response.body(BodyExtractors.toDataBuffers()), MAX_REASON_BYTES)
                .map(RefusedCall::text)
                .onErrorResume(DataBufferLimitException.class, tooLong -> Mono.just(""))
                .defaultIfEmpty("")
                .flatMap(reason -> Mono.error(new ReplicaException(node, "answered " + status + (reason.isEmpty() ? "" : ": " + reason))));
    }

    private static String text(DataBuffer body) {
        try {
            return body.toString(StandardCharsets.UTF_8).strip();
        } finally {
            DataBufferUtils.release(body);
        }
    }
}
