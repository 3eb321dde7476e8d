package dev.kvlab.peer;

import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Hooks;

/**
 * Reactor's hook for errors that arrive after their sequence has ended, which Reactor logs at ERROR
 * by default. One of them is expected: a peer call cancelled (its timeout, or a sibling call's
 * failure) just as its response arrives. Spring then releases the response's body for the
 * cancelled call, the handler already on its way finds it taken, and Reactor drops a
 * "Rejecting additional inbound receiver" error of a body marked cancelled. The call's outcome was
 * already its cancellation, so that one is logged at DEBUG; every other dropped error at ERROR, as
 * before.
 */
public final class CancelledCallBodies {

    private static final Logger log = LoggerFactory.getLogger(CancelledCallBodies.class);
    private static final AtomicBoolean installed = new AtomicBoolean();

    private CancelledCallBodies() {
    }

    /** Installs the hook once per process (Reactor's hooks add up, and are global). */
    public static void install() {
        if (installed.compareAndSet(false, true)) {
            Hooks.onErrorDropped(CancelledCallBodies::dropped);
        }
    }

    static void dropped(Throwable error) {
        if (isBodyOfCancelledCall(error)) {
            log.debug("a peer call was cancelled as its response arrived; its body was released: {}", error.getMessage());
        } else {
            log.error("Operator called default onErrorDropped", error);
        }
    }

    /** Reactor Netty's refusal of a second reader of a response body that a cancellation already drained. */
    static boolean isBodyOfCancelledCall(Throwable error) {
        String message = error.getMessage();
        return error instanceof IllegalStateException && message != null
                && message.startsWith("Rejecting additional inbound receiver") && message.contains("cancelled=true");
    }
}
