package dev.kvlab;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * A kvlab node: the client API, the coordinator, and this node's RocksDB replica.
 *
 * <p>{@code @SpringBootApplication}'s scan, less the management port's own configuration
 * ({@code @ManagementContextConfiguration}): that belongs to the management port's child context
 * alone, where the actuator loads it, and scanned here it would also guard the client port.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@ComponentScan(excludeFilters = {
        @ComponentScan.Filter(type = FilterType.CUSTOM, classes = TypeExcludeFilter.class),
        @ComponentScan.Filter(type = FilterType.CUSTOM, classes = AutoConfigurationExcludeFilter.class),
        @ComponentScan.Filter(type = FilterType.ANNOTATION, classes = ManagementContextConfiguration.class)})
@ConfigurationPropertiesScan
public class KvlabApplication {

    public static void main(String[] args) {
        SpringApplication.run(KvlabApplication.class, args);
    }
}
