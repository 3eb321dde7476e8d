package dev.kvlab.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

class MemoryBudgetTest {

    @Test
    void aRefusalSaysWhyAndCostsNoStackWalk() {
        MemoryBudget budget = new MemoryBudget(100);
        MemoryBudget.Lease lease = budget.lease();
        lease.hold(100);
        assertThatThrownBy(() -> budget.lease().hold(1)).isInstanceOf(OverBudgetException.class)
                .hasMessageContaining("retry later")
                .satisfies(refused -> assertThat(refused.getStackTrace()).as("a 503 under overload walks no stack").isEmpty());
        lease.release();
    }

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
    void theFirstOfSeveralValuesTakesRoomForThemAllOrFailsAndTheOthersUseIt() {
        MemoryBudget budget = new MemoryBudget(100);
        MemoryBudget.Lease lease = budget.lease();
        MemoryBudget.Lease other = budget.lease();
        other.hold(30);
        lease.expect(3);
        assertThat(lease.tryHold(25)).as("75 do not fit in 70").isFalse();
        assertThat(budget.held()).as("a refused first value takes nothing").isEqualTo(30);
        other.release();
        assertThat(lease.tryHold(30)).as("room for three of 30").isTrue();
        assertThat(budget.held()).isEqualTo(90);
        assertThat(lease.reserved()).isEqualTo(60);

        MemoryBudget.Lease late = budget.lease();
        assertThat(late.tryHold(10)).isTrue();
        assertThat(lease.tryHold(30)).as("a value that comes takes the room kept for it, however full the budget").isTrue();
        assertThat(lease.tryHold(35)).as("a larger one takes what its room lacks, if the budget has it").isFalse();
        assertThat(lease.tryHold(30)).isTrue();
        assertThat(budget.held()).isEqualTo(100);
        assertThat(lease.reserved()).isZero();

        lease.release();
        assertThat(budget.held()).isEqualTo(10);
        late.release();
        assertThat(budget.held()).isZero();
    }

    @Test
    void roomTakenAheadAndNotUsedGoesBackWithTheLease() {
        MemoryBudget budget = new MemoryBudget(8 * MIB, MIB);
        MemoryBudget.Lease lease = budget.lease();
        lease.expect(3);
        assertThat(lease.tryHold(MIB + 13)).isTrue();
        assertThat(budget.held()).as("each 1 MiB value counted as the two regions it takes").isEqualTo(6 * MIB);
        assertThat(lease.reserved()).isEqualTo(4 * MIB);
        lease.release();
        assertThat(budget.held()).isZero();
        assertThat(lease.tryHold(1)).isFalse();
    }

    @Test
    void aBudgetWithAReplicasShareKeepsItFromTheRequestsItCoordinates() {
        MemoryBudget budget = new MemoryBudget(100, 0, 40);
        assertThat(budget.limit()).isEqualTo(60);
        assertThat(budget.forReplicaWork().limit()).isEqualTo(40);
        assertThat(budget.totalLimit()).isEqualTo(100);
        MemoryBudget.Lease coordinating = budget.lease();
        assertThat(coordinating.tryHold(61)).isFalse();
        assertThat(coordinating.tryHold(60)).isTrue();
        MemoryBudget.Lease forAPeer = budget.forReplicaWork().lease();
        assertThat(forAPeer.tryHold(40)).as("the peers' share is still there").isTrue();
        assertThat(budget.held()).as("held counts both").isEqualTo(100);
        coordinating.release();
        forAPeer.release();
        assertThat(budget.held()).isZero();
        assertThat(new MemoryBudget(100).forReplicaWork().limit()).as("one pool: the same budget").isEqualTo(100);
    }

    @Test
    void theReplicasShareIsTakenWhereBothSidesHoldTheLargestBody() {
        long largestBody = 2 * MIB;
        MemoryBudget budget = new MemoryProperties(null, 0.4).budget(128 * MIB, largestBody, MIB);
        assertThat(budget.totalLimit()).isEqualTo(32 * MIB);
        assertThat(budget.forReplicaWork().limit()).isEqualTo((long) (32 * MIB * 0.4));
        MemoryBudget small = new MemoryProperties(null, 0.4).budget(12 * MIB, largestBody, MIB);
        assertThat(small.forReplicaWork()).as("3 MiB cannot hold two bodies: one pool").isSameAs(small);
        MemoryBudget none = new MemoryProperties(null, 0).budget(128 * MIB, largestBody, MIB);
        assertThat(none.forReplicaWork()).isSameAs(none);
    }

    @Test
    void theBudgetIsAQuarterOfTheHeapUnlessConfiguredAndAlwaysHoldsTheLargestBody() {
        long largestBody = MIB + 13;
        assertThat(new MemoryProperties(null, 0.4).bytesInFlight(512 * MIB, largestBody)).isEqualTo(128 * MIB);
        assertThat(new MemoryProperties(null, 0.4).bytesInFlight(2 * MIB, largestBody)).isEqualTo(largestBody);
        assertThat(new MemoryProperties(DataSize.ofMegabytes(8), 0.4).bytesInFlight(512 * MIB, largestBody)).isEqualTo(8 * MIB);
        assertThatThrownBy(() -> new MemoryProperties(DataSize.ofMegabytes(1), 0.4).bytesInFlight(512 * MIB, largestBody))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kvlab.memory.max-bytes-in-flight must hold one body of the largest value, 1048589 bytes");
    }
}
