package dev.kvlab;

import org.springframework.boot.actuate.autoconfigure.web.server.ConditionalOnManagementPort;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * The management port's connection limit and body deadlines ({@code kvlab.netty.*}). The port is
 * Spring's own server, in a context of its own whose server takes none of the client port's
 * customizers: Spring Boot imports this class into that context (it is listed in
 * META-INF/spring/...ManagementContextConfiguration.imports). Not a component, so that the
 * client port's context does not scan it in.
 */
@ConditionalOnManagementPort(ManagementPortType.DIFFERENT)
class ManagementPortGuards {

    @Bean
    WebServerFactoryCustomizer<NettyReactiveWebServerFactory> managementPortGuards(NettyProperties netty) {
        return factory -> factory.addServerCustomizers(netty.managementPort()::applyTo);
    }
}
