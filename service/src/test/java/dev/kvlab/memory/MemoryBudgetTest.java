package dev.kvlab.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

class MemoryBudgetTest {

    static final long MIB = 1024 * 1024;

    @Test
    void aHoldingOfHalfARegionOrMoreTakesTheWholeRegionsItOccupies() {
        MemoryBudget budget = new MemoryBudget(8 * MIB, MIB);
        MemoryBudget.Lease large = budget.lease();
        large.hold(MIB + 13);
        assertThat(budget.held()).as("a 1 MiB value and its header span two 1 MiB regions").isEqualTo(2 * MIB);
        MemoryBudget.Lease small = budget.lease();
        small.hold(100 * 1024);
        assertThat(budget.held()).as("an array under half a region is counted as its bytes").isEqualTo(2 * MIB + 100 * 1024);
        assertThat(budget.lease().tryHold(5 * MIB + MIB / 2)).as("5.5 MiB takes six regions: 8.1 MiB, over the 8 MiB limit").isFalse();
        assertThat(budget.lease().tryHold(5 * MIB)).as("5 MiB takes five: 7.1 MiB").isTrue();
        large.release();
        assertThat(budget.held()).as("the two regions given back").isEqualTo(5 * MIB + 100 * 1024);
    }

    @Test
    void leasesShareTheLimitAndGiveTheirBytesBack() {
        MemoryBudget budget = new MemoryBudget(100);
        MemoryBudget.Lease first = budget.lease();
        MemoryBudget.Lease second = budget.lease();

        assertThat(first.tryHold(60)).isTrue();
        assertThat(second.tryHold(41)).as("over the limit: refused").isFalse();
        assertThat(budget.held()).as("a refused hold takes nothing").isEqualTo(60);
        assertThatThrownBy(() -> second.hold(41)).isInstanceOf(OverBudgetException.class).hasMessageContaining("limit of 100 bytes");
        assertThat(second.tryHold(40)).isTrue();
        assertThat(budget.held()).isEqualTo(100);

        first.release();
        assertThat(budget.held()).isEqualTo(40);
        first.release();
        assertThat(budget.held()).as("a second release gives nothing back twice").isEqualTo(40);
        assertThat(second.tryHold(60)).isTrue();
        second.release();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aSharedLeaseGivesItsBytesBackWhenItsLastUserReleasesItAndTakesNothingAfter() {
        MemoryBudget budget = new MemoryBudget(100);
        MemoryBudget.Lease lease = budget.lease();
        lease.hold(30);
        lease.share();

        lease.release();
        assertThat(budget.held()).as("one user still holds it").isEqualTo(30);
        assertThat(lease.tryHold(10)).isTrue();
        lease.release();
        assertThat(budget.held()).isZero();
        assertThat(lease.tryHold(10)).as("a released lease takes no more: a late answer is dropped").isFalse();
        assertThat(budget.held()).isZero();
    }

    @Test
    void theBudgetIsAQuarterOfTheHeapUnlessConfiguredAndAlwaysHoldsTheLargestBody() {
        long largestBody = MIB + 13;
        assertThat(new MemoryProperties(null).bytesInFlight(512 * MIB, largestBody)).isEqualTo(128 * MIB);
        assertThat(new MemoryProperties(null).bytesInFlight(2 * MIB, largestBody)).isEqualTo(largestBody);
        assertThat(new MemoryProperties(DataSize.ofMegabytes(8)).bytesInFlight(512 * MIB, largestBody)).isEqualTo(8 * MIB);
        assertThatThrownBy(() -> new MemoryProperties(DataSize.ofMegabytes(1)).bytesInFlight(512 * MIB, largestBody))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kvlab.memory.max-bytes-in-flight must hold one body of the largest value, 1048589 bytes");
    }
}
