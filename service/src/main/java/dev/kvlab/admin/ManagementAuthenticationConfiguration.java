package dev.kvlab.admin;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.context.annotation.Bean;

/**
 * Puts {@link ManagementAuthentication} into the management port's own (child) application
 * context: a WebFilter of the main context would also run on every request of the client port,
 * while this one sees only the management port's requests. The management port is never the
 * client port ({@code ManagementPortDefault} refuses that), so the child context always exists.
 */
@ManagementContextConfiguration(value = ManagementContextType.CHILD, proxyBeanMethods = false)
public class ManagementAuthenticationConfiguration {

    @Bean
    ManagementAuthentication managementAuthentication(ManagementCredentials credentials, MeterRegistry registry) {
        return new ManagementAuthentication(credentials, registry);
    }
}
