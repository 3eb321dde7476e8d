package dev.kvlab.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.springframework.http.MediaType;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/** Short answers for the routes served by Reactor Netty directly: the same plain-text errors as {@link ApiErrors}. */
public final class NettyResponses {

    private NettyResponses() {
    }

    /** The message as a line of text, with its Content-Length (also the answer to a HEAD). */
    public static Mono<Void> plain(HttpServerResponse response, HttpResponseStatus status, String message) {
        byte[] line = (message + "\n").getBytes(StandardCharsets.UTF_8);
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, MediaType.TEXT_PLAIN_VALUE)
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(line.length))
                .send(Mono.just(Unpooled.wrappedBuffer(line)))
                .then();
    }

    /** An error after which the connection closes: the request body is not read. */
    public static Mono<Void> closing(HttpServerResponse response, HttpResponseStatus status, String message) {
        response.header(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return plain(response, status, message);
    }

    /**
     * An error answered once the request's body has been read and dropped, on a connection that
     * stays open: a client still sending is not cut off by a reset before it reads the answer. Only
     * for bodies already known to be bounded; the dropped bytes are held nowhere.
     */
    public static Mono<Void> afterDroppingBody(HttpServerRequest request, HttpServerResponse response, HttpResponseStatus status, String message) {
        return request.receive().then(Mono.defer(() -> plain(response, status, message)));
    }

    /**
     * The same line of text as a whole Netty response that closes the connection: for the handlers
     * that answer in the channel's pipeline, before a request reaches a route.
     */
    public static FullHttpResponse closingResponse(HttpResponseStatus status, String message) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(message + "\n", StandardCharsets.UTF_8));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/plain;charset=UTF-8")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes())
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return response;
    }

    /**
     * Writes a pipeline handler's {@link #closingResponse}, then shuts the connection's output and
     * closes it when the client closes, at the latest after {@link ConnectionLimit#LINGER_MILLIS}.
     * What the client still sends meanwhile must be dropped (read, not answered): closing at once
     * with its bytes unread would reset the connection under an answer not yet read, as for a client
     * that sends the whole of an over-long request before it reads.
     */
    public static void answerThenLinger(ChannelHandlerContext ctx, FullHttpResponse response) {
        ctx.channel().config().setAutoRead(true);
        ctx.writeAndFlush(response).addListener((ChannelFutureListener) written -> {
            if (!written.isSuccess() || !(ctx.channel() instanceof DuplexChannel duplex)) {
                ctx.close();
                return;
            }
            duplex.shutdownOutput();
            ctx.executor().schedule(() -> ctx.close(), ConnectionLimit.LINGER_MILLIS, TimeUnit.MILLISECONDS);
        });
    }

    public static Mono<Void> empty(HttpServerResponse response, HttpResponseStatus status) {
        return response.status(status).send().then();
    }
}
