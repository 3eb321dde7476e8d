package dev.kvlab.peer;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/** The body of a call cancelled as its response arrived is not an ERROR in the log; every other dropped error still is. */
class CancelledCallBodiesTest {

    final Logger logger = (Logger) LoggerFactory.getLogger(CancelledCallBodies.class);
    final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    Level before;

    @BeforeEach
    void listen() {
        CancelledCallBodies.install();
        before = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(logged);
        logger.setLevel(before);
    }

    @Test
    void theBodyOfACancelledCallIsLoggedAtDebug() {
        Operators.onErrorDropped(new IllegalStateException(
                "Rejecting additional inbound receiver. State=[terminated=false, cancelled=true, pending=0, error=false]"), Context.empty());

        assertThat(logged.list).singleElement().satisfies(event -> assertThat(event.getLevel()).isEqualTo(Level.DEBUG));
    }

    @Test
    void anyOtherDroppedErrorIsStillAnError() {
        // A second reader of a body nobody cancelled is a bug of its caller.
        Operators.onErrorDropped(new IllegalStateException(
                "Rejecting additional inbound receiver. State=[terminated=false, cancelled=false, pending=0, error=false]"), Context.empty());
        Operators.onErrorDropped(new IllegalArgumentException("cancelled=true"), Context.empty());
        Operators.onErrorDropped(new IllegalStateException((String) null), Context.empty());

        assertThat(logged.list).hasSize(3).allSatisfy(event -> assertThat(event.getLevel()).isEqualTo(Level.ERROR));
    }
}
