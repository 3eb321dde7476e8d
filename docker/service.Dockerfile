# The kvlab node image: one Dockerfile for every machine.
#
# Build context: a directory that holds kvlab-service.jar (`make image` sends exactly that).
# By hand, with a registry:
#   docker build -f docker/service.Dockerfile -t kvlab/service:0.1.0 service/target
# Without one (our machines), on the base that docker/base-image.sh builds offline:
#   docker build -f docker/service.Dockerfile --build-arg BASE_IMAGE=$(docker/base-image.sh) \
#     -t kvlab/service:0.1.0 service/target
#
# Run:
#   docker run -p 8080:8080 -v kvlab-n0:/data kvlab/service:0.1.0
#   docker run ... -e KVLAB_CLUSTER_NODES=http://n1:8080,http://n2:8080 -e KVLAB_CLUSTER_SELF=http://n1:8080
# JVM flags: -e JAVA_OPTS="..." replaces the defaults below. Spring settings: -e KVLAB_... or
# arguments after the image name (--kvlab.replication.timeout=2s).
# A node drains requests for up to 20 s on SIGTERM: give `docker stop -t 30` that time.

ARG BASE_IMAGE=debian:trixie-slim

# The runtime: a JRE 25 from Debian, curl for the health check, useradd, and a non-root user.
FROM ${BASE_IMAGE} AS runtime
# Installs only what the base lacks: on debian:trixie-slim the JRE and curl come from apt; the
# offline base (docker/base-image.sh) has them all, so the step needs no network there.
# The JRE's postinst links its manual page, whose directory slim images leave out.
RUN set -eux; \
    packages="openjdk-25-jre-headless ca-certificates curl passwd"; \
    if [ "$(dpkg-query -W -f '${db:Status-Status} ' $packages 2>/dev/null)" != "installed installed installed installed " ]; then \
        mkdir -p /usr/share/man/man1; \
        apt-get update; \
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages; \
        apt-get clean; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    java -version
# A fixed uid/gid, so volumes and Kubernetes securityContext (runAsUser: 10001) agree on owners.
RUN groupadd --system --gid 10001 kvlab \
    && useradd --system --uid 10001 --gid kvlab --home-dir /app --no-create-home --shell /usr/sbin/nologin kvlab \
    && mkdir -p /app /data \
    && chown kvlab:kvlab /data

# Split the Spring Boot jar into layers (Spring Boot's tools jar mode, as its reference
# documentation recommends): dependencies/lib/*.jar, which change when a dependency does, apart
# from application/kvlab-service.jar (the classes, about 100 KB), which changes with every commit. The
# extracted kvlab-service.jar is a plain jar whose manifest lists lib/*.jar: it runs with
# `java -jar`, faster than the nested-jar launcher, and keeps the manifest's
# Enable-Native-Access (RocksDB's native library) in force.
FROM runtime AS layers
# Marks this throw-away stage: the legacy builder keeps it as an untagged image, which
# `make image` removes (docker image prune --filter label=dev.kvlab.image).
LABEL dev.kvlab.image=service-layers
WORKDIR /layers
ARG JAR_FILE=kvlab-service.jar
COPY ${JAR_FILE} kvlab-service.jar
RUN java -Djarmode=tools -jar kvlab-service.jar extract --layers --destination extracted

FROM runtime
ARG VERSION=0.1.0
LABEL dev.kvlab.image=service \
      org.opencontainers.image.title="kvlab service" \
      org.opencontainers.image.description="kvlab: a replicated key-value store on RocksDB" \
      org.opencontainers.image.version="${VERSION}"
WORKDIR /app
# Least to most often changed, one image layer each: a code change rebuilds and ships only the
# last one. dependencies holds rocksdbjni (about 90 MB: natives for many platforms).
COPY --from=layers /layers/extracted/dependencies/ ./
COPY --from=layers /layers/extracted/spring-boot-loader/ ./
COPY --from=layers /layers/extracted/snapshot-dependencies/ ./
COPY --from=layers /layers/extracted/application/ ./

ENV KVLAB_STORAGE_DIR=/data \
    SERVER_PORT=8080
# The JVM sees the container's memory and CPU limits by itself (UseContainerSupport is on by
# default): these flags size from the limit instead of a fixed -Xmx.
#   MaxRAMPercentage=50     heap = half the memory limit. Not the usual 75: RocksDB lives off-heap
#                           (block cache 64 MB + up to 3 x 32 MB memtables by default, plus index
#                           blocks), and so do Netty's direct buffers, metaspace, code cache and
#                           thread stacks. With a 1 GiB limit: 512 MB heap, ~500 MB for the rest.
#   ExitOnOutOfMemoryError  a node out of heap exits and gets restarted instead of limping on;
#                           acknowledged writes are in RocksDB's write-ahead log already.
# Without a memory limit the percentages apply to the host's memory.
ENV JAVA_OPTS="-XX:MaxRAMPercentage=50 -XX:+ExitOnOutOfMemoryError"

VOLUME /data
# The client API (and the replica protocol unless KVLAB_REPLICATION_PORT sets a port of its own);
# the actuator (probes, metrics) on the management port, server.port + 1000.
EXPOSE 8080 9080
USER kvlab
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${SERVER_PORT}/v0/status" || exit 1
# exec: java is PID 1 and gets SIGTERM (graceful drain). Arguments after the image name reach
# Spring ("$@").
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS -jar /app/kvlab-service.jar \"$@\"", "kvlab"]
