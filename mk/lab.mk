# The load lab: k6 and wrk phases, async-profiler flame graphs, generated reports. Included by
# the Makefile. Every run writes reports/<timestamp>-<NAME>/ with report.md and report.html.
#
#   make lab            the whole lab: build, start a local cluster of its own, fill, PUT, GET and
#                       mixed phases profiled on every node, a short saturation search (how much
#                       can it take?), stop the cluster, write the report. SCENARIO=saturation runs
#                       the search alone, with every step profiled. SCENARIO=faults: fill, warm-up,
#                       then one mixed phase at RATE during which the last node is killed, paused and
#                       cut off (FAULTS), each followed by time to recover, then the wait for the
#                       cluster to heal. Cutting a node off needs root. SCENARIO=soak: fill, warm-up,
#                       then the mixed load for SOAK_DURATION (30m) at SOAK_SHARE (0.7) of the highest
#                       rate within the SLO (SOAK_RATE: search first, a rate, or reports/<run>'s),
#                       the nodes' memory, files and disk sampled; a verdict on drift.
#                       SCENARIO=disaster: fill, warm-up, one mixed phase of DURATION with the ledger,
#                       a backup of the whole cluster a third of the way in; then every node stopped,
#                       its data removed, restored from the backup, started again, and every key the
#                       ledger acknowledged checked: written before the backup began, it must be
#                       back (the report's first row: missing must be 0); after it, present or lost
#                       by design. Backup and restore times, rate and p99 during the backup against
#                       before it. BACKUP_TARGET (data/lab/backups; s3://... with S3_*). With
#                       LAB_TARGET=k8s the release itself is backed up, uninstalled with its data
#                       claims and restored into a new one (mk/k8s.mk).
#                       NODES (3), LAB_PORT (8280), LAB_JAVA_OPTS (-Xmx512m), KEEP_DATA=1 (the nodes' data
#                       and logs), KEEP_SAMPLES=1 (k6's per-request CSV beside each time series).
#                       TLS=1: the nodes speak the replica protocol over mutual TLS (a throwaway CA,
#                       scripts/local-tls.sh; the client ports stay HTTP), to compare with a run without.
#   make lab-tools      install the pinned tools into .tools/ (k6, wrk, jattach, async-profiler, venv)
#   make lab-local      phases against running nodes:  TARGETS=url,url PIDS=pid,pid [RATE DURATION ...]
#   make lab-saturate   step the rate until p99 > SLO or the rate falls behind; the maximum rate
#   make lab-replication-cost  what replication costs: one node's PUT and GET rates, then three nodes at 2/3
#                       at SHARE % of each, RUNS times, and a verdict (scripts/replication-cost.sh; defaults:
#                       loadtests/lab/replication-cost.env)
#   make lab-repair-cost  what anti-entropy repair costs on three nodes of its own over 1M keys: a wiped
#                       node's refill, CPU per key of a round, GET and PUT p99 with and without repair
#                       (scripts/repair-cost.sh; RUNS, PARTS, GET_RATE, PUT_RATE, JAR_BASE, ...)
#   make lab-hotpath    the hot-path benchmark on one node of its own (GET 10k/s and 20k/s, PUT 15k/s,
#                       each against its no-op route at that rate): CPU per request; HOTPATH_TOOL=wrk|k6,
#                       HOTPATH_DATA=dir (filled once, kept); defaults: loadtests/lab/hotpath.env
#   make lab-scale      one node of its own with the Helm chart's memory limit (a cgroup when root, else
#                       -Xmx half of it), filled in steps to each of SIZES (100k,1M,10M; each step adds
#                       keys), and at every size: fill rate, write amplification, status/GET/PUT p50, p99
#                       and CPU per request at RATE (10000/s) for SCALE_DURATION (30s) after SCALE_WARMUP
#                       (10s), heap, RSS, cgroup memory, disk use, block-cache hit rates, and whether the
#                       node survived. VALUE_SIZE (1024), MEMORY_LIMIT (helm | none | 2Gi),
#                       PORT (28090), DATA=dir (kept and reused: only missing keys are filled), KEEP_DATA=1.
#                       Defaults: loadtests/lab/scale.env; a value given to make wins.
#   make lab-large-reads  three nodes of their own at -Xmx128m (scripts/local-cluster.sh, ports from
#                       LARGE_PORT 24000), values of 1 MiB, then LARGE_CLIENTS (96) clients reading them at
#                       3/3 for LARGE_DURATION (30s) and a small key read LARGE_SMALL_RATE (20)/s: the budgets'
#                       capacity, the goodput, 200/503/504, the small key's p99, every node alive without
#                       OutOfMemoryError; LARGE_FLAMEGRAPHS=1 profiles every node. Defaults: loadtests/lab/largereads.env
#   make lab-scale-smoke  CI: lab-scale at SIZES=20k,60k, RATE=2000, 5 s phases, then its report checked
#   make lab-report     write a run's report again:    RUN=reports/<run> [COMPARE=reports/<other>]; it gates
#                       only when given GATE
#   make lab-check      check a run's report and its conclusion: RUN=reports/<run> [STRICT=1]
#   make lab-profile    one flame graph of a JVM:      PROFILE_PID=pid [EVENT=cpu SECONDS=10 OUT=x.html]
#   make lab-selftest   test the lab's own code (report generator, parsing) on synthetic data
#
# Every knob of loadtests/lab/defaults.env (its default and what each does) is a make variable
# here and an option of `python -m lab` (RATE=800 is --rate=800): RATE, DURATION, WARMUP, PHASES
# (also range, conditional, status, and outage: the mixed load with the last node paused for its middle third,
# then the wait for the cluster to heal), KEYS, VALUE_SIZE, REPLICAS (ack/from), TOOL (k6 | wrk),
# EVENTS (cpu,alloc,lock,wall | none), SLO_P99_MS, SEARCH (get | none: the short saturation search
# after the phases), SEARCH_STEPS, SEARCH_STEP, ..., FAULTS (SCENARIO=faults: kind@at+for,... with
# kinds kill, pause, cutoff; kill:n1@20+15 names a node),
# GATE (all: lab, lab-local, lab-saturate, lab-hotpath and lab-scale exit non-zero, 99, when a row of
# the report's verdict fails: the SLO or a benchmark's target missed, data lost; data: only data lost,
# a cluster that did not heal, as the CI smoke runs gate; none: report only).
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

# Each knob as its option, the prefix (2) taken off: HOTPATH_PUT_RATE -> --put-rate='15000'. One word a
# knob, so a value may hold spaces (JVM options: HOTPATH_JAVA_OPTIONS="-Xmx256m -Dkvlab...").
knob_options = $(foreach k,$(1),--$(shell echo '$(patsubst $(2)%,%,$(k))' | tr 'A-Z_' 'a-z-')='$($(k))')

# Every knob but PHASES (a saturation search alone has none) as its option: RATE -> --rate='500'.
LAB_KNOBS := $(filter-out K8S_% PHASES,$(foreach kv,$(LAB_DEFAULTS),$(firstword $(subst =, ,$(kv)))))
LAB_OPTIONS = $(call knob_options,$(LAB_KNOBS),) \
	$(if $(COMPARE),--compare $(COMPARE))
LAB_COMMON = --targets $(TARGETS) --pids "$(PIDS)" --name $(NAME) $(LAB_OPTIONS)


# What `make lab` runs: phases (the PHASES at RATE, then a short search), saturation (the search
# alone), faults (one mixed phase with FAULTS) or soak (a long mixed phase: drift).
SCENARIO ?= phases

# Hot-path benchmark: its defaults are loadtests/lab/hotpath.env, each HOTPATH_<NAME> a make variable
# and the option --<name> (HOTPATH_PUT_RATE: --put-rate).
HOTPATH_DEFAULTS := $(shell grep -E '^HOTPATH_[A-Z0-9_]+=' loadtests/lab/hotpath.env)
$(foreach kv,$(HOTPATH_DEFAULTS),$(eval $(firstword $(subst =, ,$(kv))) ?= $(patsubst $(firstword $(subst =, ,$(kv)))=%,%,$(kv))))
HOTPATH_KNOBS := $(foreach kv,$(HOTPATH_DEFAULTS),$(firstword $(subst =, ,$(kv))))
HOTPATH_OPTIONS = $(call knob_options,$(HOTPATH_KNOBS),HOTPATH_)
HOTPATH_DATA ?=

# Scale benchmark: its defaults are loadtests/lab/scale.env. RATE, VALUE_SIZE, PORT, DATA and NAME
# have other defaults for other targets, so a knob counts only when given on the command line or in
# the environment; otherwise scale.env's value (none for DATA) is used.
SCALE_DEFAULTS := $(shell grep -E '^[A-Z0-9_]+=' loadtests/lab/scale.env)
scale_knob = $(if $(filter command environment,$(origin $(1))),$($(1)),$(patsubst $(1)=%,%,$(filter $(1)=%,$(SCALE_DEFAULTS))))
SCALE_OPTIONS = --sizes $(call scale_knob,SIZES) --rate $(call scale_knob,RATE) \
	--duration $(call scale_knob,SCALE_DURATION) --warmup $(call scale_knob,SCALE_WARMUP) \
	--value-size $(call scale_knob,VALUE_SIZE) --memory-limit $(call scale_knob,MEMORY_LIMIT) \
	--port $(call scale_knob,PORT) --name $(call scale_knob,NAME) \
	$(if $(call scale_knob,DATA),--data $(call scale_knob,DATA)) $(if $(filter 1 yes true,$(KEEP_DATA)),--keep-data) \
	$(if $(COMPARE),--compare $(COMPARE))

# Large-reads benchmark: its defaults are loadtests/lab/largereads.env, each LARGE_<NAME> a make variable
# and the option --<name> (LARGE_SMALL_RATE: --small-rate).
LARGE_DEFAULTS := $(shell grep -E '^LARGE_[A-Z0-9_]+=' loadtests/lab/largereads.env)
$(foreach kv,$(LARGE_DEFAULTS),$(eval $(firstword $(subst =, ,$(kv))) ?= $(patsubst $(firstword $(subst =, ,$(kv)))=%,%,$(kv))))
LARGE_KNOBS := $(foreach kv,$(LARGE_DEFAULTS),$(firstword $(subst =, ,$(kv))))
LARGE_OPTIONS = $(call knob_options,$(LARGE_KNOBS),LARGE_) \
	$(if $(filter 1 yes true,$(LARGE_FLAMEGRAPHS)),--flamegraphs)

# Replication-cost benchmark: its defaults are loadtests/lab/replication-cost.env, which
# scripts/replication-cost.sh reads for every knob make does not pass.

.PHONY: lab lab-smoke lab-tools lab-local lab-saturate lab-replication-cost lab-repair-cost lab-hotpath lab-scale lab-scale-smoke lab-large-reads lab-report lab-check lab-profile lab-selftest

lab: build lab-tools ## the whole lab on a local cluster: RATE= DURATION= PHASES= [SCENARIO=saturation|faults|soak|disaster FAULTS=] -> reports/
	NODES=$(or $(NODES),3) SCENARIO=$(SCENARIO) TLS=$(TLS) \
	KVLAB_LAB_INVOCATION="$(strip make lab $(-*-command-variables-*-))" LAB_PY=$(LAB_PY) JAVA=$(JAVA) \
	scripts/lab.sh --name $(if $(filter local,$(NAME)),$(if $(filter saturation faults soak disaster,$(SCENARIO)),$(SCENARIO),lab),$(NAME)) $(LAB_OPTIONS) \
		$(if $(filter saturation faults soak disaster,$(SCENARIO)),,--phases $(PHASES)) $(LAB_ARGS)

lab-smoke: ## CI: a short `make lab` end to end (an outage last; it fails on data lost, not on speed), then a check that its report has every part and its draft conclusion agrees with its data
	$(MAKE) lab NAME=local-smoke RATE=300 DURATION=10s WARMUP=3s KEYS=3000 PHASES=fill,put,get,mixed,outage TOOL=k6 \
		SEARCH_STEPS=3 SEARCH_STEP=5s GATE=data
	cd loadtests && $(LAB_PY) -m lab check --strict "$$(ls -d $(CURDIR)/reports/*-local-smoke | tail -n 1)"

lab-tools: ## install the load lab's pinned tools into .tools/ (quiet when present)
	@loadtests/tools/install.sh

lab-local: lab-tools ## load running nodes: TARGETS=url,... PIDS=pid,... [RATE= DURATION= PHASES= TOOL=]
	$(LAB) run $(LAB_COMMON) --phases $(PHASES) $(LAB_ARGS)

lab-saturate: lab-tools ## find the max sustainable rate: TARGETS= PIDS= [SEARCH=get START_RATE= FACTOR= SLO_P99_MS=]
	$(LAB) saturate $(LAB_COMMON) $(LAB_ARGS)

lab-replication-cost: build lab-tools ## one node's PUT and GET rates, then 3 nodes at 2/3 at SHARE % of each, RUNS times -> a verdict
	LAB_PY=$(LAB_PY) JAVA=$(JAVA) scripts/replication-cost.sh

lab-repair-cost: build lab-tools ## repair's cost on 3 nodes over 1M keys: refill time, CPU per key, GET/PUT p99 on vs off -> reports/
	LAB_PY=$(LAB_PY) JAVA=$(JAVA) scripts/repair-cost.sh

lab-hotpath: build lab-tools ## hot-path benchmark: one node -Xmx256m, 1M keys, GET 10k/s and 20k/s, PUT 15k/s vs /v0/status
	$(LAB) hotpath $(HOTPATH_OPTIONS) --gate $(GATE) \
		$(if $(HOTPATH_DATA),--data $(HOTPATH_DATA)) $(if $(COMPARE),--compare $(COMPARE)) $(LAB_ARGS)

lab-scale: build lab-tools ## one node with the chart's memory limit filled to each of SIZES: fill, GET/PUT p99, CPU, memory, disk, cache
	$(LAB) scale $(SCALE_OPTIONS) --gate $(GATE) $(LAB_ARGS)

lab-scale-smoke: ## CI: a short `make lab-scale` (20k and 60k keys, 2000/s, 5 s phases; it fails on data lost, not on speed), then a check that its report has every part and its draft conclusion agrees with its data
	$(MAKE) lab-scale NAME=scale-smoke SIZES=20k,60k RATE=2000 SCALE_DURATION=5s SCALE_WARMUP=4s GATE=data
	cd loadtests && $(LAB_PY) -m lab check --strict "$$(ls -d $(CURDIR)/reports/*-scale-smoke | tail -n 1)"

lab-large-reads: build lab-tools ## 3 nodes at -Xmx128m, 96 clients reading 1 MiB at 3/3 and a small key: capacity, goodput, 503/504, small p99, no OOM
	$(LAB) large-reads $(LARGE_OPTIONS) --gate $(GATE) $(if $(COMPARE),--compare $(COMPARE)) $(LAB_ARGS)

lab-report: lab-tools ## write a run's report.md, report.html and draft conclusion again, print its verdict: RUN=reports/<run> [COMPARE= GATE=]
	@test -n "$(RUN)" || { echo "usage: make lab-report RUN=reports/<run> [COMPARE=reports/<other>]"; exit 2; }
	$(LAB) report $(RUN) $(if $(COMPARE),--compare $(COMPARE)) $(if $(filter command environment,$(origin GATE)),--gate $(GATE))

lab-check: lab-tools ## check a run's report: every part there, no number or claim of its conclusion the data lacks: RUN=reports/<run> [STRICT=1]
	@test -n "$(RUN)" || { echo "usage: make lab-check RUN=reports/<run> [STRICT=1: a warning on the conclusion fails too]"; exit 2; }
	cd loadtests && $(LAB_PY) -m lab check $(if $(filter 1 yes true,$(STRICT)),--strict) "$(abspath $(RUN))"

lab-profile: lab-tools ## one flame graph: PROFILE_PID=pid [EVENT=cpu SECONDS=10 OUT=profile.html]
	@test -n "$(PROFILE_PID)" || { echo "usage: make lab-profile PROFILE_PID=<jvm pid> [EVENT=cpu SECONDS=10 OUT=profile.html]"; exit 2; }
	loadtests/profiler/profile.sh $(PROFILE_PID) $(or $(EVENT),cpu) $(or $(SECONDS),10) $(or $(OUT),profile-$(PROFILE_PID)-$(or $(EVENT),cpu).html)

lab-selftest: ## test the lab's own code: report generator and its pages in a headless browser, wrk parsing, profiling windows, warm-ups, faults
	@loadtests/tools/install.sh venv wrk chromium
	@if [ "$$(id -u)" = 0 ]; then loadtests/tools/install.sh nft; fi
	cd loadtests && $(LAB_PY) -m unittest discover -s lab/tests -t . -v
