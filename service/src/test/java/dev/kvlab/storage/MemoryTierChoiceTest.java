package dev.kvlab.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MemoryTierChoiceTest {

    /** A window of 8 attempts, half of which memory must answer; one read in 4 probes while skipping. */
    static final StorageProperties.MemoryReads SETTINGS = new StorageProperties.MemoryReads(true, 0.5, 8, 4);

    @Test
    void readsKeepAskingMemoryWhileItAnswers() {
        MemoryTierChoice choice = new MemoryTierChoice(SETTINGS);

        for (int i = 0; i < 100; i++) {
            assertThat(choice.worthTrying()).isTrue();
            choice.tried(i % 2 == 0); // exactly the minimum hit rate
        }

        assertThat(choice.skipping()).isFalse();
        assertThat(choice.skipped()).isZero();
    }

    @Test
    void afterAWindowOfMissesReadsSkipMemoryButForOneProbeInEvery() {
        MemoryTierChoice choice = new MemoryTierChoice(SETTINGS);
        missWindow(choice);

        assertThat(choice.skipping()).isTrue();
        int tried = 0;
        for (int i = 0; i < 40; i++) {
            if (choice.worthTrying()) {
                tried++;
                choice.tried(false);
            }
        }
        assertThat(tried).as("one read in 4 probes memory").isEqualTo(10);
        assertThat(choice.skipped()).isEqualTo(30);
        assertThat(choice.skipping()).as("probes that keep missing keep reads off memory").isTrue();
    }

    @Test
    void whenTheProbesFindTheWorkingSetBackInMemoryEveryReadAsksItAgain() {
        MemoryTierChoice choice = new MemoryTierChoice(SETTINGS);
        missWindow(choice);

        int reads = 0;
        while (choice.skipping() && reads < 1000) {
            reads++;
            if (choice.worthTrying()) {
                choice.tried(true);
            }
        }

        assertThat(choice.skipping()).isFalse();
        assertThat(reads).as("a window of probes, one read in 4").isEqualTo(8 * 4);
        for (int i = 0; i < 20; i++) {
            assertThat(choice.worthTrying()).isTrue();
            choice.tried(true);
        }
    }

    @Test
    void aWindowUnderTheHitRateStopsTheAttemptsEvenWithSomeHits() {
        MemoryTierChoice choice = new MemoryTierChoice(SETTINGS);

        for (int i = 0; i < 8; i++) {
            choice.worthTrying();
            choice.tried(i < 3); // 3 of 8 < half
        }

        assertThat(choice.skipping()).isTrue();
    }

    @Test
    void withAdaptiveOffEveryReadAsksMemoryHoweverOftenItMisses() {
        MemoryTierChoice choice = new MemoryTierChoice(new StorageProperties.MemoryReads(false, 0.5, 8, 4));

        for (int i = 0; i < 100; i++) {
            assertThat(choice.worthTrying()).isTrue();
            choice.tried(false);
        }

        assertThat(choice.skipping()).isFalse();
        assertThat(choice.skipped()).isZero();
    }

    private static void missWindow(MemoryTierChoice choice) {
        for (int i = 0; i < 8; i++) {
            assertThat(choice.worthTrying()).isTrue();
            choice.tried(false);
        }
    }
}
