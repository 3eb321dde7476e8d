# kvlab: the verbs a user types. `make help` lists them.

# Java 25: the Temurin JDK where our machines have it, else whatever JAVA_HOME points at.
JAVA_HOME := $(or $(wildcard /usr/lib/jvm/temurin-25-jdk-amd64),$(JAVA_HOME))
export JAVA_HOME
JAVA := $(JAVA_HOME)/bin/java
MVN := ./mvnw -B -ntp

JAR := service/target/kvlab-service.jar
PORT ?= 8080
DATA ?= ./data/n0

.PHONY: help build test run up down status repair stop-node start-node check-java

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

check-java:
	@$(JAVA) -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])' || \
		{ echo "kvlab needs Java 25: set JAVA_HOME to a JDK 25 (found: $$($(JAVA) -version 2>&1 | head -1))"; exit 1; }

build: check-java ## build service/target/kvlab-service.jar
	$(MVN) -DskipTests package

test: check-java ## run every test: unit, API, cluster, process (kill -9, small heap), Docker fault tests, the lab's self-tests
	$(MVN) verify

# The address of the nodes' management ports (actuator): this machine only, unless set otherwise.
MANAGEMENT_ADDRESS ?= 127.0.0.1

run: build ## run one node on PORT (8080) with data in DATA (./data/n0), its management port on MANAGEMENT_ADDRESS (127.0.0.1)
	$(JAVA) -XX:+ExitOnOutOfMemoryError -jar $(JAR) --server.port=$(PORT) --kvlab.storage.dir=$(DATA) \
		--management.server.address=$(MANAGEMENT_ADDRESS)

N ?= 3
# Where the nodes put their backups (mk/backup.mk): a directory, or s3://bucket[/prefix] with S3_ENDPOINT,
# S3_ACCESS_KEY, S3_SECRET_KEY and S3_REGION in the environment.
BACKUP_TARGET ?= $(CURDIR)/backups
CLUSTER := JAVA=$(JAVA) JAR=$(JAR) MANAGEMENT_ADDRESS=$(MANAGEMENT_ADDRESS) BACKUP_TARGET="$(BACKUP_TARGET)" scripts/local-cluster.sh

up: build ## start a local cluster of N (3) nodes on 127.0.0.1:8080.. with data in ./data/n*, backups to BACKUP_TARGET (./backups)
	$(CLUSTER) up $(N)

down: ## stop the local cluster (SIGTERM: nodes drain and close RocksDB)
	$(CLUSTER) down

status: ## the local cluster, node by node: serving or down, topology, hints, repair rounds, handoff
	@$(CLUSTER) status

repair: ## ask every node of the local cluster for a repair round with every peer now
	@$(CLUSTER) repair

stop-node: ## stop one node of the local cluster, as a node that fails: NODE=2
	@$(CLUSTER) stop $(NODE)

start-node: ## start that node again on its data; the others replay what it missed: NODE=2
	@$(CLUSTER) start $(NODE)

# The load lab's knobs: their defaults are loadtests/lab/defaults.env, which `python -m lab` reads too.
LAB_DEFAULTS := $(shell grep -E '^[A-Z0-9_]+=' loadtests/lab/defaults.env)
# $(call lab_defaults,PREFIX): each PREFIX<NAME>=value line of that file as `NAME ?= value`, so the
# command line and the environment still win.
lab_defaults = $(foreach kv,$(filter $(1)%,$(LAB_DEFAULTS)),$(eval $(patsubst $(1)%,%,$(firstword $(subst =, ,$(kv)))) ?= $(word 2,$(subst =, ,$(kv)))))

include mk/*.mk
