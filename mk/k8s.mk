# Kubernetes: the Helm chart (helm/kvlab), the profiler sidecar image, a kind cluster for users, and
# the end-to-end tests on a real cluster. Included by the Makefile. The cluster is whatever
# KUBECONFIG points at; images get into it with IMAGE_LOADER.
#
#   make k8s-up         kind cluster (when IMAGE_LOADER is kind's and it does not exist), images built
#                       and loaded, the chart installed with 3 nodes and the profiler sidecar, waited for
#   make k8s-down       uninstall the release; delete the kind cluster when IMAGE_LOADER is kind's
#   make profile        flame graph of a pod: POD=kvlab-1 [EVENT=cpu SECONDS=30 PROFILE_DIR=profiles]
#   make k8s-lint       helm lint and render the chart in its variants (no cluster needed)
#   make k8s-test       end-to-end tests on the cluster, in a namespace of their own (k8s/e2e/run.sh)
#   make profiler-image the sidecar image kvlab/profiler:<version>
#   make lab LAB_TARGET=k8s   the load lab inside the cluster: the chart installed or updated with the
#                       profiler sidecar (k8s-up), the load generator images built and loaded, then
#                       the phases as Jobs against the client Service (k8s/lab.sh); the release stays.
#                       K6_PODS (2), RATE (1000), PHASES (fill,put,get,mixed,get@wrk), NAME (k8s),
#                       LAB_UNINSTALL=1, K6_RESOURCES, WRK_RESOURCES; the other knobs as in mk/lab.mk.
#                       SCENARIO=saturation, and SCENARIO=faults (FAULTS, NAME k8s-faults) as on local
#                       nodes: a pod's JVM paused or killed from its profiler sidecar; no cut-off.
#                       SCENARIO=soak (NAME k8s-soak): the pods' memory from their cgroups
#                       SCENARIO=disaster (NAME k8s-disaster): the release installed with backups on
#                       (K8S_DISASTER_VALUES: to a directory on the claim the chart keeps), a backup
#                       under load through pod 0's management port; then the release UNINSTALLED and
#                       its data claims DELETED, installed again with restore.backup and checked;
#                       the release stays as restored, with the backups' claim
#   make lab-k8s-images the load generator images kvlab/k6, kvlab/wrk (kvlab/wrk2 where GitHub answers:
#                       WRK2=auto|1|0), loaded into the cluster with IMAGE_LOADER
#   make lab-k8s-smoke  CI: a short in-cluster lab in a namespace of its own, then `python -m lab check`
#   make lab-k8s-disaster-smoke  the same for SCENARIO=disaster (a short backup, restore and key check)
#   make k8s-netpol     NETPOL_ENFORCER=kube-router: a NetworkPolicy enforcer for clusters without one
#                       (k8s-local's bridge CNI); kind enforces by itself. With NETPOL_ENFORCER set,
#                       `make k8s-test` installs it first. make k8s-netpol-down removes it.
#
# Elsewhere than kind:
#   minikube:   make k8s-up IMAGE_LOADER="minikube image load"
#   k8s-local:  eval "$(../shared/k8s-local/k8s-local up)"
#               make k8s-test IMAGE_LOADER="../shared/k8s-local/k8s-local load-image"

HELM ?= helm
KUBECTL ?= kubectl
KIND ?= kind
KIND_CLUSTER ?= kvlab
KIND_CONFIG ?= k8s/kind/cluster.yaml
# The command that copies a local Docker image into the cluster; it gets the image as last argument.
IMAGE_LOADER ?= $(KIND) load docker-image --name $(KIND_CLUSTER)

CHART := helm/kvlab
RELEASE ?= kvlab
K8S_NAMESPACE ?= kvlab
K8S_REPLICAS ?= 3
K8S_PROFILER ?= true
HELM_TIMEOUT ?= 5m
HELM_ARGS ?=
PROFILER_IMAGE ?= kvlab/profiler:$(KVLAB_VERSION)
PROFILE_DIR ?= profiles

# The images' repositories and tags, as the chart's values want them.
K8S_IMAGE_VALUES = --set image.repository=$(firstword $(subst :, ,$(KVLAB_IMAGE))) \
	--set image.tag=$(lastword $(subst :, ,$(KVLAB_IMAGE))) \
	--set profiler.image.repository=$(firstword $(subst :, ,$(PROFILER_IMAGE))) \
	--set profiler.image.tag=$(lastword $(subst :, ,$(PROFILER_IMAGE)))

# kind's own cluster is made and removed here; any other loader means a cluster someone else runs.
K8S_KIND := $(filter $(KIND),$(firstword $(IMAGE_LOADER)))

# The in-cluster load lab's images: k6 at the version loadtests/tools/versions.env pins, Debian's wrk,
# and wrk2 built from source when GitHub answers (WRK2=auto), or must (WRK2=1), or never (WRK2=0).
K6_VERSION := $(shell sed -n 's/^K6_VERSION=//p' loadtests/tools/versions.env)
K6_IMAGE ?= kvlab/k6:$(K6_VERSION:v%=%)
WRK_IMAGE ?= kvlab/wrk:$(KVLAB_VERSION)
WRK2_IMAGE ?= kvlab/wrk2:$(KVLAB_VERSION)
WRK2 ?= auto
LAB_TARGET ?= local
LAB_K8S_SMOKE_NAMESPACE ?= kvlab-lab-smoke

.PHONY: profiler-image k8s-images k8s-cluster k8s-up k8s-down k8s-lint k8s-test profile lab-k8s-images lab-k8s-smoke \
	lab-k8s-disaster-smoke

profiler-image: docker-engine ## build the profiler sidecar image kvlab/profiler:<version> (jattach, async-profiler, profile.sh)
	@k8s/profiler/build.sh $(PROFILER_IMAGE) $(KVLAB_VERSION)

k8s-images: image profiler-image ## build both images and load them into the cluster with IMAGE_LOADER
	$(IMAGE_LOADER) $(KVLAB_IMAGE)
	$(IMAGE_LOADER) $(PROFILER_IMAGE)

k8s-cluster:
ifneq ($(K8S_KIND),)
	@$(KIND) get clusters 2>/dev/null | grep -qx '$(KIND_CLUSTER)' || \
		$(KIND) create cluster --name $(KIND_CLUSTER) --config $(KIND_CONFIG) --wait 3m
	@$(KUBECTL) config use-context kind-$(KIND_CLUSTER) >/dev/null
endif
	@$(KUBECTL) version >/dev/null || { echo "no Kubernetes answers at $${KUBECONFIG:-~/.kube/config}"; exit 1; }

k8s-up: k8s-cluster k8s-images ## a kind cluster (or KUBECONFIG's) with K8S_REPLICAS (3) kvlab nodes and the profiler sidecar
	$(HELM) upgrade --install $(RELEASE) $(CHART) --namespace $(K8S_NAMESPACE) --create-namespace \
		--set replicaCount=$(K8S_REPLICAS) --set profiler.enabled=$(K8S_PROFILER) $(K8S_IMAGE_VALUES) $(K8S_SCENARIO_VALUES) $(HELM_ARGS) \
		--wait --timeout $(HELM_TIMEOUT)
	$(KUBECTL) --namespace $(K8S_NAMESPACE) get pods -l app.kubernetes.io/instance=$(RELEASE) -o wide

k8s-down: ## uninstall the release (its volumes stay); delete the kind cluster when IMAGE_LOADER is kind's
ifneq ($(K8S_KIND),)
	@if $(KIND) get clusters 2>/dev/null | grep -qx '$(KIND_CLUSTER)'; then $(KIND) delete cluster --name $(KIND_CLUSTER); fi
else
	$(HELM) uninstall $(RELEASE) --namespace $(K8S_NAMESPACE) --ignore-not-found --wait --timeout $(HELM_TIMEOUT)
endif

profile: ## flame graph of a pod to PROFILE_DIR: POD=kvlab-1 [EVENT=cpu SECONDS=30 K8S_NAMESPACE=kvlab]
	@test -n "$(POD)" || { echo "usage: make profile POD=<pod> [EVENT=cpu|alloc|lock|wall SECONDS=30 K8S_NAMESPACE=$(K8S_NAMESPACE) PROFILE_DIR=$(PROFILE_DIR)]"; exit 2; }
	@K8S_NAMESPACE=$(K8S_NAMESPACE) KUBECTL="$(KUBECTL)" k8s/profile-pod.sh $(POD) $(or $(EVENT),cpu) $(or $(SECONDS),30) $(PROFILE_DIR)

k8s-lint: ## helm lint the chart and render it with each optional part on
	@HELM="$(HELM)" k8s/lint.sh $(CHART)

k8s-test: k8s-lint k8s-cluster k8s-images ## end-to-end tests on the cluster (kind's, made when missing, or KUBECONFIG's), namespace per run
	HELM="$(HELM)" KUBECTL="$(KUBECTL)" KVLAB_IMAGE=$(KVLAB_IMAGE) PROFILER_IMAGE=$(PROFILER_IMAGE) k8s/e2e/run.sh

lab-k8s-images: docker-engine ## the in-cluster lab's images (k6, wrk; wrk2 where GitHub answers), loaded with IMAGE_LOADER
	@WRK2=$(WRK2) k8s/loadgen/build.sh $(K6_IMAGE) $(WRK_IMAGE) $(WRK2_IMAGE) $(KVLAB_VERSION)
	$(IMAGE_LOADER) $(K6_IMAGE)
	@if docker image inspect $(WRK2_IMAGE) >/dev/null 2>&1; then wrk=$(WRK2_IMAGE); else wrk=$(WRK_IMAGE); fi; \
		echo "$(IMAGE_LOADER) $$wrk"; $(IMAGE_LOADER) $$wrk

# make lab LAB_TARGET=k8s: mk/lab.mk's `lab` runs scripts/lab.sh, which hands over to k8s/lab.sh;
# first the release is installed or updated with the profiler sidecar and the images are loaded.
# Defaults of its own (the K8S_ lines of loadtests/lab/defaults.env): a name of its own (its reports
# compare with each other), a rate for a cluster that shares the machine, and wrk's GET next to k6's.
ifeq ($(LAB_TARGET),k8s)
lab: k8s-up lab-k8s-images
ifneq ($(filter faults soak disaster,$(SCENARIO)),)
NAME ?= k8s-$(SCENARIO)
endif
# The disaster backs the release up and restores it: backups on, to a directory on the claim the
# chart makes and keeps on uninstall; no schedule (the lab asks for its backup). ReadWriteOnce: every
# pod mounts the claim, which works on a one-node cluster (kind's, k8s-local); BACKUP_ACCESS_MODE=
# ReadWriteMany where pods spread over nodes and the storage allows it.
BACKUP_ACCESS_MODE ?= ReadWriteOnce
ifeq ($(SCENARIO),disaster)
K8S_DISASTER_VALUES ?= --set backup.enabled=true --set backup.schedule= \
	--set 'backup.persistence.accessModes={$(BACKUP_ACCESS_MODE)}'
K8S_SCENARIO_VALUES = $(K8S_DISASTER_VALUES)
endif
$(call lab_defaults,K8S_)
export LAB_TARGET K8S_NAMESPACE RELEASE KUBECTL HELM K6_PODS K6_IMAGE WRK_IMAGE WRK2_IMAGE K6_RESOURCES \
	WRK_RESOURCES LAB_WRK_IMAGE LAB_UNINSTALL
endif

# The smoke run has a namespace of its own, which it deletes at the end whatever happened.
lab-k8s-smoke: ## CI: a short in-cluster lab in a namespace of its own (removed after), then its report checked
	@rc=0; $(MAKE) lab LAB_TARGET=k8s NAME=k8s-smoke RATE=200 DURATION=12s WARMUP=0 KEYS=2000 K6_PODS=2 EVENTS=cpu,alloc SEARCH_STEPS=2 SEARCH_STEP=6s \
		PHASES=fill,put,get,mixed,get@wrk K8S_NAMESPACE=$(LAB_K8S_SMOKE_NAMESPACE) LAB_UNINSTALL=1 GATE=data \
		K6_RESOURCES=requests.cpu=100m,requests.memory=64Mi,limits.memory=512Mi || rc=$$?; \
	$(KUBECTL) delete namespace $(LAB_K8S_SMOKE_NAMESPACE) --ignore-not-found --wait=false || true; \
	exit $$rc
	cd loadtests && $(LAB_PY) -m lab check --strict "$$(ls -d $(CURDIR)/reports/*-k8s-smoke | tail -n 1)"

# The disaster scenario, short (the lab-k8s-smoke knobs): its release and backups in a namespace of
# their own, deleted at the end whatever happened; the report checked (the key check gates).
LAB_K8S_DISASTER_NAMESPACE ?= kvlab-lab-disaster

lab-k8s-disaster-smoke: ## a short in-cluster SCENARIO=disaster in a namespace of its own (removed after), then its report checked
	@rc=0; $(MAKE) lab LAB_TARGET=k8s SCENARIO=disaster NAME=k8s-disaster-smoke RATE=200 DURATION=15s WARMUP=3s KEYS=2000 \
		K6_PODS=2 K8S_NAMESPACE=$(LAB_K8S_DISASTER_NAMESPACE) LAB_UNINSTALL=1 GATE=data \
		K6_RESOURCES=requests.cpu=100m,requests.memory=64Mi,limits.memory=512Mi || rc=$$?; \
	$(KUBECTL) delete namespace $(LAB_K8S_DISASTER_NAMESPACE) --ignore-not-found --wait=false || true; \
	exit $$rc
	cd loadtests && $(LAB_PY) -m lab check --strict "$$(ls -d $(CURDIR)/reports/*-k8s-disaster-smoke | tail -n 1)"

# A NetworkPolicy enforcer for clusters whose CNI does not enforce (k8s-local's bridge): empty by
# default, as kind (v0.24 and later) enforces NetworkPolicy itself; kube-router installs kube-router's
# network policy controller alone (k8s/netpol/), built offline and loaded with IMAGE_LOADER.
NETPOL_ENFORCER ?=
NETPOL_ENFORCERS := kube-router

.PHONY: k8s-netpol k8s-netpol-down

k8s-netpol: docker-engine k8s-cluster ## NETPOL_ENFORCER=kube-router: install a NetworkPolicy enforcer into a cluster that has none, wait until it syncs
	@case "$(NETPOL_ENFORCER)" in \
		kube-router) KUBECTL="$(KUBECTL)" IMAGE_LOADER="$(IMAGE_LOADER)" k8s/netpol/install.sh ;; \
		"") echo "NETPOL_ENFORCER is empty: nothing to install (set NETPOL_ENFORCER=kube-router)" ;; \
		*) echo "NETPOL_ENFORCER must be one of: $(NETPOL_ENFORCERS) (or empty), not '$(NETPOL_ENFORCER)'"; exit 2 ;; \
	esac

k8s-netpol-down: ## remove the enforcer k8s-netpol installed (its pods take their rules off the nodes)
	@KUBECTL="$(KUBECTL)" k8s/netpol/uninstall.sh

# With an enforcer asked for, the end-to-end tests run on a cluster that enforces: installed after
# the images are loaded, before k8s/e2e/run.sh (prerequisites of one target run in order).
k8s-test: $(if $(NETPOL_ENFORCER),k8s-netpol)
