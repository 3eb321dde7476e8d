package dev.kvlab;

import dev.kvlab.backup.BackupsCommand;
import dev.kvlab.backup.RestoreCommand;
import java.util.Arrays;
import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * A kvlab node: the client API, the coordinator, and this node's RocksDB replica.
 *
 * <p>{@code @SpringBootApplication}'s scan, less the management port's own configuration
 * ({@code @ManagementContextConfiguration}): that belongs to the management port's child context
 * alone, where the actuator loads it, and scanned here it would also guard the client port.
 *
 * <p>With {@code restore} or {@code backups} as its first argument, the jar runs that command
 * instead of a node, without a web server or Spring context, and exits with its code.
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
        String command = args.length == 0 ? "" : args[0];
        if (command.equals("restore") || command.equals("backups")) {
            List<String> rest = Arrays.asList(args).subList(1, args.length);
            // The libraries' own logs (RocksDB's, the S3 client's) only when something is wrong.
            LoggingSystem.get(KvlabApplication.class.getClassLoader()).setLogLevel(LoggingSystem.ROOT_LOGGER_NAME, LogLevel.WARN);
            System.exit(command.equals("restore")
                    ? RestoreCommand.run(rest, System.getenv(), System.out, System.err)
                    : BackupsCommand.run(rest, System.getenv(), System.out, System.err));
        }
        SpringApplication.run(KvlabApplication.class, args);
    }
}
