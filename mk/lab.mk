# The load lab: k6 and wrk phases, async-profiler flame graphs, generated reports. Included by
# the Makefile. Every run writes reports/<timestamp>-<NAME>/ with report.md and report.html.
#
#   make lab            the whole lab: build, start a local cluster of its own, fill, PUT, GET and
#                       mixed phases profiled on every node, a short saturation search (how much
#                       can it take?), stop the cluster, write the report. SCENARIO=saturation runs
#                       the search alone, with every step profiled. SCENARIO=faults: fill, warm-up,
#                       then one mixed phase at RATE during which the last node is killed, paused and
#                       cut off (FAULTS), each followed by time to recover, then the wait for the
#                       cluster to heal. Cutting a node off needs root.
#                       NODES (3), LAB_PORT (8280), LAB_JAVA_OPTS (-Xmx512m), KEEP_DATA=1 (the nodes' data
#                       and logs), KEEP_SAMPLES=1 (k6's per-request CSV beside each time series).
#   make lab-tools      install the pinned tools into .tools/ (k6, wrk, jattach, async-profiler, venv)
#   make lab-local      phases against running nodes:  TARGETS=url,url PIDS=pid,pid [RATE DURATION ...]
#   make lab-saturate   step the rate until p99 > SLO or the rate falls behind; the maximum rate
#   make lab-replication-cost  what replication costs: one node's PUT and GET rates, then three nodes at 2/3
#                       at SHARE (40) % of each, RUNS (3) times, and a verdict (scripts/replication-cost.sh)
#   make lab-repair-cost  what anti-entropy repair costs on three nodes of its own over 1M keys: a wiped
#                       node's refill, CPU per key of a round, GET and PUT p99 with and without repair
#                       (scripts/repair-cost.sh; RUNS, PARTS, GET_RATE, PUT_RATE, JAR_BASE, ...)
#   make lab-hotpath    the hot-path benchmark on one node of its own (GET 25k/s, PUT 15k/s against its
#                       no-op route): CPU per request; HOTPATH_TOOL=wrk|k6
#   make lab-report     write a run's report again:    RUN=reports/<run> [COMPARE=reports/<other>]
#   make lab-profile    one flame graph of a JVM:      PROFILE_PID=pid [EVENT=cpu SECONDS=10 OUT=x.html]
#   make lab-selftest   test the lab's own code (report generator, parsing) on synthetic data
#
# Every knob of loadtests/lab/defaults.env (its defaults and what each does) is a make variable
# here and an option of `python -m lab` (RATE=800 is --rate=800): RATE (500/s), DURATION (30s),
# WARMUP (60s), PHASES (fill,put,get,mixed; also range, status, and outage: the mixed load with the
# last node paused for its middle third, then the wait for the cluster to heal), KEYS, VALUE_SIZE,
# REPLICAS (ack/from), TOOL (k6 | wrk), EVENTS (cpu,alloc,lock,wall | none), SLO_P99_MS (10),
# SEARCH (get | none: the short saturation search after the phases), SEARCH_STEPS, SEARCH_STEP, ...,
# FAULTS (SCENARIO=faults: kind@at+for,... with kinds kill, pause, cutoff; kill:n1@20+15 names a node).
# More: NAME (local), PIDS (the nodes `make up` started, data/run/*.pid), COMPARE (a report; default
# the latest other), LAB_ARGS (more options of `python -m lab run --help`).

LAB_PY := $(CURDIR)/.tools/venv/bin/python
LAB = KVLAB_LAB_INVOCATION="make $@ $(strip $(-*-command-variables-*-))" PYTHONPATH=$(CURDIR)/loadtests $(LAB_PY) -m lab

$(call lab_defaults,)
TARGETS ?= http://127.0.0.1:8080
PIDS ?= $(shell cat data/run/*.pid 2>/dev/null | paste -sd, -)
NAME ?= local
COMPARE ?=
LAB_ARGS ?=

# Every knob but PHASES (a saturation search alone has none) as its option: RATE -> --rate='500'.
LAB_KNOBS := $(filter-out K8S_% PHASES,$(foreach kv,$(LAB_DEFAULTS),$(firstword $(subst =, ,$(kv)))))
LAB_OPTIONS = $(join $(addprefix --,$(shell echo $(LAB_KNOBS) | tr 'A-Z_' 'a-z-')),$(foreach k,$(LAB_KNOBS),='$($(k))')) \
	$(if $(COMPARE),--compare $(COMPARE))
LAB_COMMON = --targets $(TARGETS) --pids "$(PIDS)" --name $(NAME) $(LAB_OPTIONS)


# What `make lab` runs: phases (the PHASES at RATE, then a short search), saturation (the search
# alone) or faults (one mixed phase with FAULTS).
SCENARIO ?= phases

# Hot-path benchmark
HOTPATH_PORT ?= 28080
HOTPATH_DURATION ?= 30s
HOTPATH_DATA ?=
HOTPATH_TOOL ?= wrk

# Replication-cost benchmark
SHARE ?= 40
RUNS ?= 3

.PHONY: lab lab-smoke lab-tools lab-local lab-saturate lab-replication-cost lab-repair-cost lab-hotpath lab-report lab-profile lab-selftest

lab: build lab-tools ## the whole lab on a local cluster: RATE= DURATION= PHASES= [SCENARIO=saturation|faults FAULTS=] -> reports/
	NODES=$(or $(NODES),3) SCENARIO=$(SCENARIO) \
	KVLAB_LAB_INVOCATION="$(strip make lab $(-*-command-variables-*-))" LAB_PY=$(LAB_PY) JAVA=$(JAVA) \
	scripts/lab.sh --name $(if $(filter local,$(NAME)),$(if $(filter faults,$(SCENARIO)),faults,lab),$(NAME)) $(LAB_OPTIONS) \
		$(if $(filter saturation faults,$(SCENARIO)),,--phases $(PHASES)) $(LAB_ARGS)

lab-smoke: ## CI: a short `make lab` end to end (an outage last), then a check that its report has every part
	$(MAKE) lab NAME=local-smoke RATE=300 DURATION=10s WARMUP=3s KEYS=3000 PHASES=fill,put,get,mixed,outage TOOL=k6 \
		SEARCH_STEPS=3 SEARCH_STEP=5s
	cd loadtests && $(LAB_PY) -m lab check "$$(ls -d $(CURDIR)/reports/*-local-smoke | tail -n 1)"

lab-tools: ## install the load lab's pinned tools into .tools/ (quiet when present)
	@loadtests/tools/install.sh

lab-local: lab-tools ## load running nodes: TARGETS=url,... PIDS=pid,... [RATE= DURATION= PHASES= TOOL=]
	$(LAB) run $(LAB_COMMON) --phases $(PHASES) $(LAB_ARGS)

lab-saturate: lab-tools ## find the max sustainable rate: TARGETS= PIDS= [SEARCH=get START_RATE= FACTOR= SLO_P99_MS=]
	$(LAB) saturate $(LAB_COMMON) $(LAB_ARGS)

lab-replication-cost: build lab-tools ## one node's PUT and GET rates, then 3 nodes at 2/3 at SHARE (40) % of each, RUNS (3) times -> a verdict
	SHARE=$(SHARE) RUNS=$(RUNS) LAB_PY=$(LAB_PY) JAVA=$(JAVA) scripts/replication-cost.sh

lab-repair-cost: build lab-tools ## repair's cost on 3 nodes over 1M keys: refill time, CPU per key, GET/PUT p99 on vs off -> reports/
	LAB_PY=$(LAB_PY) JAVA=$(JAVA) scripts/repair-cost.sh

lab-hotpath: build lab-tools ## hot-path benchmark: one node -Xmx256m, 1M keys, GET 25k/s, PUT 15k/s vs /v0/status
	$(LAB) hotpath --tool $(HOTPATH_TOOL) --port $(HOTPATH_PORT) --duration $(HOTPATH_DURATION) \
		$(if $(HOTPATH_DATA),--data $(HOTPATH_DATA)) $(if $(COMPARE),--compare $(COMPARE)) $(LAB_ARGS)

lab-report: lab-tools ## write a run's report.md and report.html again: RUN=reports/<run> [COMPARE=]
	@test -n "$(RUN)" || { echo "usage: make lab-report RUN=reports/<run> [COMPARE=reports/<other>]"; exit 2; }
	$(LAB) report $(RUN) $(if $(COMPARE),--compare $(COMPARE))

lab-profile: lab-tools ## one flame graph: PROFILE_PID=pid [EVENT=cpu SECONDS=10 OUT=profile.html]
	@test -n "$(PROFILE_PID)" || { echo "usage: make lab-profile PROFILE_PID=<jvm pid> [EVENT=cpu SECONDS=10 OUT=profile.html]"; exit 2; }
	loadtests/profiler/profile.sh $(PROFILE_PID) $(or $(EVENT),cpu) $(or $(SECONDS),10) $(or $(OUT),profile-$(PROFILE_PID)-$(or $(EVENT),cpu).html)

lab-selftest: ## test the lab's own code: report generator, wrk parsing, profiling windows, warm-ups, faults
	@loadtests/tools/install.sh venv wrk
	@if [ "$$(id -u)" = 0 ]; then loadtests/tools/install.sh nft; fi
	cd loadtests && $(LAB_PY) -m unittest discover -s lab/tests -t . -v
