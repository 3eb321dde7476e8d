# wrk for the in-cluster load lab (make lab LAB_TARGET=k8s), two targets:
#   wrk    Debian's wrk package (builds offline: apt works inside docker build). A closed-loop tool:
#          the lab paces it from Lua (WRK_RATE) and its report says so.
#   wrk2   wrk2 built from source (git clone https://github.com/giltene/wrk2): needs internet, so
#          k8s/loadgen/build.sh builds it only when GitHub answers (WRK2=auto) or when asked (WRK2=1).
#          Installed as /usr/local/bin/wrk2; the lab uses this image whenever it exists.
# By hand:
#   docker build -f k8s/loadgen/wrk.Dockerfile --target wrk  --build-arg BASE_IMAGE=$(docker/base-image.sh) -t kvlab/wrk:0.1.0 k8s/loadgen
#   docker build -f k8s/loadgen/wrk.Dockerfile --target wrk2 --build-arg BASE_IMAGE=$(docker/base-image.sh) -t kvlab/wrk2:0.1.0 k8s/loadgen
# The Lua scripts are not in the image: the lab mounts loadtests/wrk2/ from a ConfigMap.
# `wrk` comes first: Docker's legacy builder builds every stage up to the target, and Debian's
# package must not depend on the network that wrk2 needs.

ARG BASE_IMAGE=debian:trixie-slim

FROM ${BASE_IMAGE} AS wrk
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kvlab wrk" \
      org.opencontainers.image.description="Debian's wrk (not wrk2) for kvlab's in-cluster load lab" \
      org.opencontainers.image.version="${VERSION}" \
      dev.kvlab.lab.tool="wrk"
RUN set -eux; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wrk; \
    rm -rf /var/lib/apt/lists/*; \
    wrk -v 2>&1 | head -n 1 || true
USER 10001:10001
WORKDIR /work
ENV HOME=/work
CMD ["wrk", "-v"]

# wrk2 from source. WRK2_REF pins a commit or tag (default: the repository's default branch).
# -fcommon: wrk2's C code predates GCC 10's -fno-common default.
FROM ${BASE_IMAGE} AS wrk2-build
ARG WRK2_REPOSITORY=https://github.com/giltene/wrk2
ARG WRK2_REF=
RUN set -eux; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        build-essential ca-certificates git libssl-dev zlib1g-dev; \
    git clone "$WRK2_REPOSITORY" /src/wrk2; \
    cd /src/wrk2; \
    if [ -n "$WRK2_REF" ]; then git checkout "$WRK2_REF"; fi; \
    git rev-parse HEAD > /src/wrk2/COMMIT; \
    make -j"$(nproc)" CC="gcc -fcommon"; \
    ./wrk 2>&1 | grep -q -- --rate

FROM ${BASE_IMAGE} AS wrk2
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kvlab wrk2" \
      org.opencontainers.image.description="wrk2 (built from source) for kvlab's in-cluster load lab" \
      org.opencontainers.image.version="${VERSION}" \
      dev.kvlab.lab.tool="wrk2"
RUN set -eux; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libssl3t64 zlib1g; \
    rm -rf /var/lib/apt/lists/*
COPY --from=wrk2-build /src/wrk2/wrk /usr/local/bin/wrk2
COPY --from=wrk2-build /src/wrk2/COMMIT /usr/local/share/wrk2-commit
USER 10001:10001
WORKDIR /work
ENV HOME=/work
CMD ["wrk2", "-v"]
