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

.PHONY: profiler-image k8s-images k8s-cluster k8s-up k8s-down k8s-lint k8s-test profile

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
		--set replicaCount=$(K8S_REPLICAS) --set profiler.enabled=$(K8S_PROFILER) $(K8S_IMAGE_VALUES) $(HELM_ARGS) \
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
