package dev.kvlab.http;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.springframework.util.unit.DataSize;

/**
 * A request body must keep arriving: one that brings no new bytes for {@code timeout}, or takes
 * longer in all than {@code timeout} plus a second for every {@code minRate} bytes it brought (so a
 * client cannot keep it alive a byte at a time), gets 408 with a message and the connection closes.
 * Closing ends the request, and whatever it held of the node's memory budget goes back. Reactor
 * Netty's idle timeout is off while a request is in progress, so without this a client that
 * declares a body and stalls holds its connection, and its request, for as long as it likes.
 *
 * <p>One handler per connection, right after the HTTP codec. A body that arrives in the same read
 * as its headers (most of them) costs no timer; one timer is armed while a body spans reads.
 * Bodies that are long-lived by design (a peer's stream of batches, which the node itself reads
 * at its own pace) are exempt by path.
 */
public final class BodyDeadline extends ChannelDuplexHandler {

    /** The pipeline name of the handler. */
    public static final String NAME = "kvlab.bodyDeadline";

    /**
     * The deadlines of every body on a port.
     *
     * @param timeout     the longest wait for the next bytes of a body, and the time every body gets
     *                    before {@code minRate} counts
     * @param minRate     the bytes a second a body must arrive at, on average, after that
     * @param exemptPaths paths whose bodies are long-lived streams, not read to their end at once
     */
    public record Rule(Duration timeout, DataSize minRate, List<String> exemptPaths) {

        public Rule {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("a body timeout must be positive, was " + timeout);
            }
            if (minRate.toBytes() < 1) {
                throw new IllegalArgumentException("a body's minimum rate must be at least 1 byte a second, was " + minRate);
            }
            exemptPaths = List.copyOf(exemptPaths);
        }

        /** The handler of one connection. */
        public BodyDeadline newHandler() {
            return new BodyDeadline(this);
        }

        boolean exempt(String uri) {
            for (String path : exemptPaths) {
                if (uri.startsWith(path) && (uri.length() == path.length() || uri.charAt(path.length()) == '?')) {
                    return true;
                }
            }
            return false;
        }
    }

    private final Rule rule;
    private final long timeoutNanos;
    private final long nanosPerByte;
    private final Runnable check = this::check;
    private ChannelHandlerContext ctx;

    /** A body is on its way: between a request's headers and its last content. */
    private boolean receiving;
    private long startedNanos;
    private long lastBytesNanos;
    private long received;
    /** The body's Content-Length, or -1 when it is chunked. */
    private long declared;
    private boolean bytesThisRead;
    private Future<?> timer;

    /** A response was begun after the headers of the request being received: a 408 would be a second answer. */
    private boolean answered;
    /** A response is being written in parts: nothing else may be written before its end. */
    private boolean responseOpen;
    private boolean timedOut;

    private BodyDeadline(Rule rule) {
        this.rule = rule;
        this.timeoutNanos = rule.timeout().toNanos();
        this.nanosPerByte = Math.max(1, TimeUnit.SECONDS.toNanos(1) / rule.minRate().toBytes());
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (timedOut) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request) {
            answered = false;
            if (!(msg instanceof LastHttpContent) && expectsBody(request) && !rule.exempt(request.uri())) {
                receiving = true;
                received = 0;
                declared = HttpUtil.getContentLength(request, -1L);
                startedNanos = System.nanoTime();
                lastBytesNanos = startedNanos;
            }
        } else if (receiving && msg instanceof HttpContent content) {
            received += content.content().readableBytes();
            bytesThisRead = true;
            if (msg instanceof LastHttpContent) {
                receiving = false;
                cancelTimer();
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (receiving) {
            if (bytesThisRead) {
                lastBytesNanos = System.nanoTime();
                bytesThisRead = false;
            }
            if (timer == null) {
                schedule(System.nanoTime());
            }
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (timedOut) {
            ReferenceCountUtil.release(msg);
            promise.tryFailure(new ClosedChannelException()); // the connection is closing after its 408
            return;
        }
        if (msg instanceof HttpResponse response && response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
            answered = true;
            responseOpen = !(msg instanceof LastHttpContent);
        } else if (msg instanceof LastHttpContent) {
            responseOpen = false;
        }
        super.write(ctx, msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        receiving = false;
        cancelTimer();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelTimer();
    }

    private static boolean expectsBody(HttpRequest request) {
        return HttpUtil.isTransferEncodingChunked(request) || HttpUtil.getContentLength(request, 0L) > 0;
    }

    /** When the body in progress runs out of time: the earlier of its two deadlines (offsets from its start, which cannot overflow). */
    private long deadline() {
        long stalled = lastBytesNanos - startedNanos + timeoutNanos;
        long slow = timeoutNanos + Math.min(received, Long.MAX_VALUE / 4 / nanosPerByte) * nanosPerByte;
        return startedNanos + Math.min(stalled, slow);
    }

    private void schedule(long now) {
        timer = ctx.executor().schedule(check, Math.max(deadline() - now, 1), TimeUnit.NANOSECONDS);
    }

    private void check() {
        timer = null;
        if (!receiving || !ctx.channel().isActive()) {
            return;
        }
        long now = System.nanoTime();
        if (now - deadline() < 0) {
            schedule(now);
            return;
        }
        timeOut(now);
    }

    private void timeOut(long now) {
        timedOut = true;
        receiving = false;
        if (answered || responseOpen) {
            ctx.close(); // the request has its answer, or another one is being written: no room for a 408
            return;
        }
        String message = "the request body did not arrive in time: " + received + (received == 1 ? " byte" : " bytes")
                + (declared >= 0 ? " of " + declared : "") + " in " + TimeUnit.NANOSECONDS.toMillis(now - startedNanos) + " ms. A body may go "
                + rule.timeout().toMillis() + " ms without new bytes (kvlab.netty.body-timeout), and must arrive at "
                + rule.minRate().toBytes() + " bytes a second or faster after its first " + rule.timeout().toMillis()
                + " ms (kvlab.netty.body-min-rate); the connection closes";
        ctx.writeAndFlush(NettyResponses.closingResponse(HttpResponseStatus.REQUEST_TIMEOUT, message)).addListener(ChannelFutureListener.CLOSE);
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
