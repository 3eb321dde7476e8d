package dev.kvlab.http;

import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * What keeps slow and idle clients of one port from holding the node's resources: its
 * {@link ConnectionLimit}, and a {@link BodyDeadline} on each connection it admits.
 */
public record ConnectionGuards(ConnectionLimit connections, BodyDeadline.Rule bodies) {

    /** {@code server}, its connections counted against the limit and their bodies timed. */
    public HttpServer applyTo(HttpServer server) {
        return server.doOnChannelInit((observer, channel, remoteAddress) -> {
            if (connections.admit(channel) && channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                channel.pipeline().addAfter(NettyPipeline.HttpCodec, BodyDeadline.NAME, bodies.newHandler());
            }
        });
    }
}
