package dev.kvlab.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/** The deadline of one connection's request bodies, on an embedded channel: what it times and what it answers. */
class BodyDeadlineTest {

    static final BodyDeadline.Rule RULE = new BodyDeadline.Rule(Duration.ofSeconds(1), DataSize.ofKilobytes(64), List.of("/stream"));

    final EmbeddedChannel channel = new EmbeddedChannel(RULE.newHandler());

    @AfterEach
    void releaseWhatIsLeft() {
        channel.finishAndReleaseAll();
    }

    @Test
    void aBodyThatArrivesWithItsHeadersArmsNoTimer() {
        channel.pipeline().fireChannelRead(put("/v0/entity?id=a", 3));
        channel.pipeline().fireChannelRead(new DefaultLastHttpContent(Unpooled.copiedBuffer("abc", StandardCharsets.UTF_8)));
        channel.pipeline().fireChannelReadComplete();

        assertThat(channel.runScheduledPendingTasks()).as("nanoseconds to the next timer, -1 for none").isEqualTo(-1);
    }

    @Test
    void aStalledBodyGets408WithAMessageAndItsConnectionCloses() throws Exception {
        channel.pipeline().fireChannelRead(put("/v0/entity?id=a", 10));
        channel.pipeline().fireChannelRead(new DefaultHttpContent(Unpooled.copiedBuffer("a", StandardCharsets.UTF_8)));
        channel.pipeline().fireChannelReadComplete();
        assertThat(channel.runScheduledPendingTasks()).as("a timer while the body is on its way").isPositive();

        Thread.sleep(1_200);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();

        FullHttpResponse answer = channel.readOutbound();
        assertThat(answer.status()).isEqualTo(HttpResponseStatus.REQUEST_TIMEOUT);
        assertThat(answer.content().toString(StandardCharsets.UTF_8)).contains("1 byte of 10", "kvlab.netty.body-timeout");
        assertThat(answer.headers().get("connection")).isEqualTo("close");
        answer.release();
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void aStalledBodyWhoseAnswerHasBegunIsClosedWithoutASecondAnswer() throws Exception {
        channel.pipeline().fireChannelRead(put("/v0/entity?id=a", 10));
        channel.pipeline().fireChannelReadComplete();
        channel.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.UNAUTHORIZED));
        assertThat((Object) channel.readOutbound()).isNotNull();

        Thread.sleep(1_200);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();

        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void aLongLivedStreamIsNotTimed() {
        HttpRequest stream = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/stream");
        HttpUtil.setTransferEncodingChunked(stream, true);
        channel.pipeline().fireChannelRead(stream);
        channel.pipeline().fireChannelReadComplete();

        assertThat(channel.runScheduledPendingTasks()).isEqualTo(-1);
    }

    private static HttpRequest put(String target, int length) {
        HttpRequest put = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, target);
        HttpUtil.setContentLength(put, length);
        return put;
    }
}
