package dev.kvlab.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

class DeadlineTest {

    private final EventLoop loop = new DefaultEventLoop();

    @AfterEach
    void stopLoop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void armedOnAnEventLoopItFiresOnThatLoopWhenDue() throws Exception {
        CompletableFuture<Thread> firedOn = new CompletableFuture<>();
        Thread loopThread = loop.submit(Thread::currentThread).get();
        long armed = System.nanoTime();
        loop.execute(() -> Deadline.after(Duration.ofMillis(50)).subscribe(tick -> firedOn.complete(Thread.currentThread())));

        assertThat(firedOn.get(5, TimeUnit.SECONDS)).isSameAs(loopThread);
        assertThat(System.nanoTime() - armed).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());
    }

    @Test
    void armedOffAnEventLoopItFiresToo() throws Exception {
        CompletableFuture<Long> fired = new CompletableFuture<>();
        Deadline.after(Duration.ofMillis(20)).subscribe(fired::complete);

        assertThat(fired.get(5, TimeUnit.SECONDS)).isZero();
    }

    @Test
    void aDeadlineCancelledBeforeItIsDueNeverFires() throws Exception {
        AtomicBoolean fired = new AtomicBoolean();
        CompletableFuture<Disposable> onLoop = new CompletableFuture<>();
        loop.execute(() -> onLoop.complete(Deadline.after(Duration.ofMillis(50)).subscribe(tick -> fired.set(true))));
        Disposable offLoop = Deadline.after(Duration.ofMillis(50)).subscribe(tick -> fired.set(true));

        onLoop.get(5, TimeUnit.SECONDS).dispose();
        offLoop.dispose();
        Thread.sleep(200);

        assertThat(fired).isFalse();
    }
}
