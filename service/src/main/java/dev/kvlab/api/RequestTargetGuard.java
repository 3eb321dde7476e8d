package dev.kvlab.api;

import dev.kvlab.http.NettyResponses;
import dev.kvlab.http.RequestParameters;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * Answers a request whose target is not a valid URI (a bad percent escape such as {@code %G1}, a
 * raw {@code |}) with a {@code 400} that says what is wrong, and closes the connection. Spring's
 * adapter cannot build the request of such a target and answers an empty {@code 400}; this
 * handler sits right after the HTTP codec, one per connection, so the API never sees the request.
 *
 * <p>A request line longer than the codec takes ({@code server.netty.max-initial-line-length}) gets
 * a {@code 414} that says so, where Reactor Netty would answer an empty one; the connection then
 * lingers a moment, the rest of the line dropped by the codec, so that a client still sending it
 * reads the answer instead of a reset.
 */
final class RequestTargetGuard extends ChannelInboundHandlerAdapter {

    /** The pipeline name of the handler. */
    static final String NAME = "kvlab.requestTargetGuard";

    /** The longest request line the codec takes, for the 414's message. */
    private final long maxInitialLineLength;
    private boolean rejected;

    RequestTargetGuard(long maxInitialLineLength) {
        this.maxInitialLineLength = maxInitialLineLength;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!rejected && msg instanceof HttpRequest request && request.decoderResult().cause() instanceof TooLongHttpLineException) {
            rejected = true;
            NettyResponses.answerThenLinger(ctx, NettyResponses.closingResponse(HttpResponseStatus.REQUEST_URI_TOO_LONG,
                    "the request line is longer than the " + maxInitialLineLength + " bytes a node takes (server.netty.max-initial-line-length)"
                            + "; a key is at most " + RequestParameters.MAX_KEY_BYTES + " bytes, and many keys are read with a POST to "
                            + MultiGetHandler.PATH + ", one per line"));
        }
        if (!rejected && msg instanceof HttpRequest request) {
            String problem = problem(request.uri());
            if (problem != null) {
                rejected = true;
                ctx.writeAndFlush(NettyResponses.closingResponse(HttpResponseStatus.BAD_REQUEST, problem)).addListener(ChannelFutureListener.CLOSE);
            }
        }
        if (rejected) {
            ReferenceCountUtil.release(msg); // the request and its body: the connection closes
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** What is wrong with a request target, or null when it is a valid URI. */
    static String problem(String target) {
        if (plainlyValid(target)) {
            return null; // the common case: no URI parsed twice
        }
        try {
            new URI(target);
            return null;
        } catch (URISyntaxException e) {
            return "the request target is not a valid URI (" + e.getMessage()
                    + "): percent-encode the id's bytes, each as % and two hex digits";
        }
    }

    /** Only characters a URI allows unescaped, and every % followed by two hex digits. */
    private static boolean plainlyValid(String target) {
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c == '%') {
                if (i + 2 >= target.length() || !isHex(target.charAt(i + 1)) || !isHex(target.charAt(i + 2))) {
                    return false;
                }
                i += 2;
            } else if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || "-._~!$&'()*+,;=:@/?".indexOf(c) >= 0)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isHex(char c) {
        return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
    }
}
