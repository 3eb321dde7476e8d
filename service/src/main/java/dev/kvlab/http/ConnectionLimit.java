package dev.kvlab.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.netty.NettyPipeline;

/**
 * The most connections one port keeps open at once. A connection beyond it is accepted, answered
 * with a 503 that says why, and closed: the client learns the node is full instead of waiting on
 * a backlog or seeing a reset. Each port has its own limit, so clients that fill the client port
 * leave the replica port to the peers.
 *
 * <p>A refused connection is not counted: once its answer is written the node shuts down its
 * output, and the connection lives on only until the client closes it (at most
 * {@link #LINGER_MILLIS}), its bytes read and dropped meanwhile, so that closing it does not reset
 * the connection under an answer still unread.
 */
public final class ConnectionLimit {

    /** The pipeline name of the handler that answers a refused connection. */
    public static final String NAME = "kvlab.connectionRefusal";

    static final long LINGER_MILLIS = 1_000;

    private final int max;
    private final AtomicInteger open = new AtomicInteger();
    private final ChannelHandler refusal;
    private final ChannelFutureListener closed = future -> open.decrementAndGet();

    /**
     * @param max      the most connections open at once
     * @param port     the port as the answer names it ("client port")
     * @param property the setting of {@code max}, named in the answer
     */
    public ConnectionLimit(int max, String port, String property) {
        if (max < 1) {
            throw new IllegalArgumentException(property + " must be at least 1, was " + max);
        }
        this.max = max;
        byte[] body = ("the node has " + max + " connections open on its " + port + ", its most (" + property
                + "): retry later\n").getBytes(StandardCharsets.UTF_8);
        byte[] head = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain;charset=UTF-8\r\nContent-Length: " + body.length
                + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] answer = new byte[head.length + body.length];
        System.arraycopy(head, 0, answer, 0, head.length);
        System.arraycopy(body, 0, answer, head.length, body.length);
        this.refusal = new Refusal(Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(answer).asReadOnly()));
    }

    /**
     * Counts a new connection until it closes, or, when the port has its most already, sets it up
     * to be answered with 503 and closed. Called as the connection's pipeline is built.
     *
     * @return whether the connection was admitted
     */
    public boolean admit(Channel channel) {
        if (open.incrementAndGet() > max) {
            open.decrementAndGet();
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                // Behind TLS, where there is TLS: the answer is written through it.
                channel.pipeline().addBefore(NettyPipeline.HttpCodec, NAME, refusal);
            } else {
                channel.pipeline().addFirst(NAME, refusal);
            }
            return false;
        }
        channel.closeFuture().addListener(closed);
        return true;
    }

    /** Connections open now, refused ones aside. */
    public int open() {
        return open.get();
    }

    public int max() {
        return max;
    }

    /** Answers 503 as the connection opens, drops what the client sends, and closes. The HTTP handlers never see it. */
    @ChannelHandler.Sharable
    private static final class Refusal extends ChannelInboundHandlerAdapter {

        private final ByteBuf answer;

        Refusal(ByteBuf answer) {
            this.answer = answer;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.channel().config().setAutoRead(true);
            ctx.writeAndFlush(answer.duplicate()).addListener((ChannelFutureListener) written -> {
                if (!written.isSuccess()) {
                    ctx.close();
                    return;
                }
                // The answer is whole: the client sees the end of it at once, and closes.
                if (ctx.channel() instanceof DuplexChannel duplex) {
                    duplex.shutdownOutput();
                }
                ctx.executor().schedule(() -> ctx.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
            });
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            // nothing: the client's bytes are dropped
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
