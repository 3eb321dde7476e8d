package dev.kvlab.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BodyBudgetTest {

    @Test
    void leasesShareTheLimitAndGiveTheirBytesBack() {
        BodyBudget budget = new BodyBudget(100);
        BodyBudget.Lease first = budget.lease();
        BodyBudget.Lease second = budget.lease();

        assertThat(first.hold(60)).isTrue();
        assertThat(second.hold(41)).as("over the limit: refused").isFalse();
        assertThat(budget.held()).as("a refused hold takes nothing").isEqualTo(60);
        assertThat(second.hold(40)).isTrue();
        assertThat(budget.held()).isEqualTo(100);

        first.release();
        assertThat(budget.held()).isEqualTo(40);
        first.release();
        assertThat(budget.held()).as("a second release gives nothing back twice").isEqualTo(40);
        assertThat(second.hold(60)).isTrue();
        second.release();
        assertThat(budget.held()).isZero();
    }
}
