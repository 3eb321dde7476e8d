# k6 for the in-cluster load lab (make lab LAB_TARGET=k8s): the k6 binary over the project's base.
#
# No Go image can be pulled on our machines, so k6 is not built in a build stage: k8s/loadgen/build.sh
# builds it on the host from its Go module (go install go.k6.io/k6@<K6_VERSION of
# loadtests/tools/versions.env>, CGO off, GOOS=linux and the engine's architecture) and sends a
# build context holding only this file and the binary. By hand:
#   docker build -f k8s/loadgen/k6.Dockerfile --build-arg BASE_IMAGE=$(docker/base-image.sh) \
#     --build-arg K6_VERSION=v1.8.1 -t kvlab/k6:1.8.1 <folder with the k6 binary>
# The scenarios are not in the image: the lab mounts loadtests/k6/ from a ConfigMap, so the image
# only changes with k6's version.

ARG BASE_IMAGE=debian:trixie-slim
FROM ${BASE_IMAGE}
ARG K6_VERSION
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kvlab k6" \
      org.opencontainers.image.description="k6 ${K6_VERSION} (built from go.k6.io/k6) for kvlab's in-cluster load lab" \
      org.opencontainers.image.version="${K6_VERSION}" \
      dev.kvlab.lab.tool="k6" \
      dev.kvlab.lab.version="${VERSION}"
COPY k6 /usr/local/bin/k6
RUN k6 version
# The lab's Jobs run as this user (runAsNonRoot) with a read-only root file system; /work is an
# emptyDir for the summary JSON.
USER 10001:10001
WORKDIR /work
ENV HOME=/work
CMD ["k6", "version"]
