package dev.kvlab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.mock.env.MockEnvironment;

/** The actuator always gets a port of its own: the client port + 1000, or the one set, never the client port. */
class ManagementPortDefaultTest {

    @Test
    void theManagementPortIsTheClientPortPlus1000UnlessSet() {
        MockEnvironment environment = new MockEnvironment().withProperty("server.port", "8300");
        new ManagementPortDefault().postProcessEnvironment(environment, new SpringApplication());
        assertThat(environment.getProperty("management.server.port")).isEqualTo("9300");

        MockEnvironment set = new MockEnvironment().withProperty("server.port", "8300").withProperty("management.server.port", "9999");
        new ManagementPortDefault().postProcessEnvironment(set, new SpringApplication());
        assertThat(set.getProperty("management.server.port")).isEqualTo("9999");
    }

    @Test
    void aManagementPortOnTheClientPortIsRefused() {
        // There the actuator's writes would share the client port's context, outside the management port's guard.
        MockEnvironment environment = new MockEnvironment().withProperty("server.port", "8300").withProperty("management.server.port", "8300");
        assertThatThrownBy(() -> new ManagementPortDefault().postProcessEnvironment(environment, new SpringApplication()))
                .hasMessageContaining("is the client port");
    }
}
