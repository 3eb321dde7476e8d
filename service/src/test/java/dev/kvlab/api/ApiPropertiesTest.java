package dev.kvlab.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

class ApiPropertiesTest {

    static final long MIB = 1024 * 1024;

    @Test
    void theBodyBudgetIsASixteenthOfTheHeapUnlessConfigured() {
        ApiProperties defaults = new ApiProperties(DataSize.ofMegabytes(1), null);
        assertThat(defaults.bodyBytesInFlight(512 * MIB)).isEqualTo(32 * MIB);
        assertThat(new ApiProperties(DataSize.ofMegabytes(1), DataSize.ofMegabytes(8)).bodyBytesInFlight(512 * MIB)).isEqualTo(8 * MIB);
    }

    @Test
    void theDefaultBudgetAlwaysHoldsOneBodyOfTheLargestValue() {
        assertThat(new ApiProperties(DataSize.ofMegabytes(1), null).bodyBytesInFlight(8 * MIB)).isEqualTo(MIB + 13);
    }

    @Test
    void aConfiguredBudgetSmallerThanTheLargestBodyIsRefusedAtStartup() {
        assertThatThrownBy(() -> new ApiProperties(DataSize.ofMegabytes(1), DataSize.ofMegabytes(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kvlab.api.max-body-bytes-in-flight must hold one body of the largest value, 1048589 bytes");
    }
}
