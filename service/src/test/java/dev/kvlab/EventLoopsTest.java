package dev.kvlab;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.util.unit.DataSize;
import reactor.netty.resources.LoopResources;

class EventLoopsTest {

    @Test
    void aNodeRunsOnAsManyEventLoopsAsConfigured() {
        ReactorResourceFactory factory = new NodeConfiguration().reactorResourceFactory(loops(2));
        factory.afterPropertiesSet();
        try {
            assertThat(factory.isUseGlobalResources()).isFalse();
            assertThat(loopsOf(factory.getLoopResources())).hasSize(2);
        } finally {
            factory.destroy();
        }
    }

    @Test
    void zeroKeepsReactorNettysSharedLoops() {
        ReactorResourceFactory factory = new NodeConfiguration().reactorResourceFactory(loops(0));
        assertThat(factory.isUseGlobalResources()).isTrue();
    }

    private static NettyProperties loops(int eventLoops) {
        return new NettyProperties(eventLoops, Duration.ofSeconds(10), DataSize.ofKilobytes(64), new NettyProperties.MaxConnections(2048, 2048, 256));
    }

    private static List<EventExecutor> loopsOf(LoopResources resources) {
        EventLoopGroup group = resources.onServer(false);
        List<EventExecutor> loops = new ArrayList<>();
        group.forEach(loops::add);
        return loops;
    }
}
