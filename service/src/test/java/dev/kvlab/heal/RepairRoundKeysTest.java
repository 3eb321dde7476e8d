package dev.kvlab.heal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.RecordHeader;
import dev.kvlab.storage.Version;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * How a round walks both sides' digests: the sides of one key come together, each key once, in
 * key order, whatever threads the sides arrive on and the copies end on.
 */
class RepairRoundKeysTest {

    static final int KEYS = 20_000;

    @Test
    void keysToLookUpAtThePeerAreCutIntoRequestsItTakes() {
        List<byte[]> keys = new java.util.ArrayList<>();
        for (int i = 0; i < 40_000; i++) {
            keys.add(key(i));
        }
        List<List<byte[]>> requests = RepairRound.requests(keys);
        assertThat(requests).hasSize(3);
        assertThat(requests).allSatisfy(request -> assertThat(request).hasSizeLessThanOrEqualTo(RepairRound.LOOKED_UP_PER_REQUEST));
        assertThat(requests.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(keys);

        byte[] big = new byte[1000];
        List<List<byte[]>> byBytes = RepairRound.requests(java.util.Collections.nCopies(1200, big));
        assertThat(byBytes).hasSize(3).allSatisfy(request -> assertThat(request.size() * 1002L)
                .isLessThanOrEqualTo(RepairRound.LOOKED_UP_BYTES_PER_REQUEST));
        assertThat(RepairRound.requests(List.of())).isEmpty();
    }

    @Test
    void eachKeyComesOnceWithTheSidesThatHoldIt() {
        // Even keys on both sides, odd keys on one of them (the local side below 10 000, the remote above).
        Flux<RepairRound.Side> local = keys(i -> i % 2 == 0 || i < KEYS / 2, true);
        Flux<RepairRound.Side> remote = keys(i -> i % 2 == 0 || i >= KEYS / 2, false);

        List<List<RepairRound.Side>> groups = RepairRound.byKey(Flux.mergeComparing(16, RepairRoundKeysTest::order, local, remote))
                .collectList().block(Duration.ofSeconds(30));

        assertThat(groups).hasSize(KEYS);
        for (int i = 0; i < KEYS; i++) {
            List<RepairRound.Side> group = groups.get(i);
            byte[] key = key(i);
            assertThat(group).allSatisfy(side -> assertThat(side.record().key()).isEqualTo(key));
            assertThat(group).hasSize(i % 2 == 0 ? 2 : 1);
        }
    }

    /**
     * The shape of a refill: the sides arrive on two threads, and the copies, 16 at a time, end on
     * other threads, which ask for the next keys. Reactor's bufferUntilChanged, which the round used before,
     * failed this at once with "Could not emit buffer due to lack of requests"
     * (https://github.com/reactor/reactor-core/issues/2942), as it failed a refill of 1M keys after 621 690.
     */
    @Test
    void keysRequestedFromOtherThreadsAllCome() {
        int keys = 10 * KEYS;
        Flux<RepairRound.Side> local = keys(keys, i -> i % 3 == 0, true).publishOn(Schedulers.boundedElastic(), 256);
        Flux<RepairRound.Side> remote = keys(keys, i -> true, false).publishOn(Schedulers.parallel(), 256);
        AtomicLong copied = new AtomicLong();

        RepairRound.byKey(Flux.mergeComparing(256, RepairRoundKeysTest::order, local, remote))
                .flatMap(group -> Mono.fromRunnable(copied::incrementAndGet).subscribeOn(Schedulers.parallel()), 16)
                .then()
                .block(Duration.ofSeconds(60));

        assertThat(copied).hasValue(keys);
    }

    private static Flux<RepairRound.Side> keys(IntPredicate held, boolean local) {
        return keys(KEYS, held, local);
    }

    private static Flux<RepairRound.Side> keys(int keys, IntPredicate held, boolean local) {
        return Flux.range(0, keys).filter(held::test)
                .map(i -> new RepairRound.Side(new RecordHeader.Keyed(key(i), new RecordHeader(new Version(i, 1), 3, false)), local));
    }

    private static byte[] key(int i) {
        return String.format("k%010d", i).getBytes(StandardCharsets.UTF_8);
    }

    private static int order(RepairRound.Side a, RepairRound.Side b) {
        return Arrays.compareUnsigned(a.record().key(), b.record().key());
    }
}
