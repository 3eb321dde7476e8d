# The container image and the tests that run it on Docker. Included by the Makefile.
#
#   make docker-engine    a Docker engine that answers (installs docker.io, starts dockerd if needed)
#   make base-image       the base image: debian:trixie-slim where a registry answers, else built offline
#   make image            kvlab/service:<version> from service/target/kvlab-service.jar
#   make test-containers  only the Testcontainers tests (testcontainers-it), against that image
#
# `make test` builds the image first: the Testcontainers tests in `./mvnw verify` need it.

# The project's version, from the root pom (the first <version> after the parent's).
KVLAB_VERSION := $(shell sed -n '/<\/parent>/,/<\/version>/s:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -n 1)
KVLAB_IMAGE ?= kvlab/service:$(KVLAB_VERSION)
DOCKERFILE := docker/service.Dockerfile

.PHONY: docker-engine base-image image test-containers

docker-engine: ## make a Docker engine answer (installs docker.io and starts dockerd when missing)
	@docker/docker-engine.sh

base-image: docker-engine ## ensure the image's base (offline: mmdebstrap + docker import, cached)
	@docker/base-image.sh

# BASE_IMAGE=... picks the base by hand; by default docker/base-image.sh finds or builds one.
# The build context is service/target: the Dockerfile only copies kvlab-service.jar from it.
image: build docker-engine ## build the container image kvlab/service:<version> (KVLAB_IMAGE=...)
	@base="$$(docker/base-image.sh)" && \
	echo "docker build $(KVLAB_IMAGE) FROM $$base" && \
	docker build --file $(DOCKERFILE) --build-arg BASE_IMAGE="$$base" --build-arg VERSION=$(KVLAB_VERSION) \
		--tag $(KVLAB_IMAGE) service/target
	@# Untagged images of ours: the jar-extracting stage the legacy builder leaves behind (~0.6 GB
	@# each build) and the image this build replaced, unless a container still uses it.
	@docker image prune --force --filter label=dev.kvlab.image >/dev/null
	@docker image ls $(KVLAB_IMAGE) --format '$(KVLAB_IMAGE): {{.Size}}'

test-containers: image ## run only the Testcontainers tests against the image
	$(MVN) verify -pl testcontainers-it -Dkvlab.image=$(KVLAB_IMAGE)

# The Testcontainers tests run in `make test` (./mvnw verify): the image must exist first, and
# they test the one it built (KVLAB_IMAGE=... too). The lab's own self-tests (Python, seconds) run first.
test: image lab-selftest
test: MVN += -Dkvlab.image=$(KVLAB_IMAGE)
