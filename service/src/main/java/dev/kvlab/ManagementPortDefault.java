package dev.kvlab;

import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Serves the actuator (health with details, metrics, Prometheus) on a port of its own, so none of
 * it is open to clients on the client port: {@code management.server.port} when set, otherwise
 * {@code server.port + 1000} (9080 for 8080), so nodes that share a machine on neighbouring client
 * ports get neighbouring management ports. A random client port (0) gets a random one. A
 * management port equal to the client port is refused.
 */
class ManagementPortDefault implements EnvironmentPostProcessor {

    static final int OFFSET = 1000;

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        int server = environment.getProperty("server.port", Integer.class, 8080);
        if (environment.containsProperty("management.server.port")) {
            Integer set = environment.getProperty("management.server.port", Integer.class);
            if (set != null && set > 0 && set == server) {
                // On one port the actuator would share the client port's context, outside the
                // management port's authentication (dev.kvlab.admin), and open to every client.
                throw new IllegalArgumentException("management.server.port " + set + " is the client port (server.port): "
                        + "the actuator needs a port of its own");
            }
            return;
        }
        if (server < 0) {
            return; // no web server at all
        }
        int management = server == 0 ? 0 : server + OFFSET;
        if (management > 65535) {
            throw new IllegalArgumentException("server.port " + server + " leaves no room for the management port at server.port + "
                    + OFFSET + ": set management.server.port");
        }
        environment.getPropertySources().addLast(new MapPropertySource("kvlab management port", Map.of("management.server.port", management)));
    }
}
