#!/usr/bin/env bash
# Makes a Docker engine answer on this machine, for `make image` and the Testcontainers tests.
#
#   - installs Debian's docker.io with apt when there is no dockerd (and no engine answers);
#   - starts dockerd in the background when `docker info` does not answer (no systemd needed),
#     logging to $KVLAB_DOCKERD_LOG (default /var/log/kvlab-dockerd.log);
#   - waits until the engine answers, and checks that the docker client and the engine agree on an
#     API version.
#
# Idempotent, and silent when the engine already answers. Any engine that answers is fine: a remote
# one through DOCKER_HOST, Docker Desktop, a systemd-managed one.
#
# The docker client may be newer than the engine (here /usr/local/bin/docker 28.x, API 1.50, and
# Debian bookworm's engine 20.10, API 1.41). The client negotiates down to the engine's version by
# itself; a DOCKER_API_VERSION exported above what the engine speaks breaks that, so this script
# reports it and says which value works.
set -euo pipefail

LOG=${KVLAB_DOCKERD_LOG:-/var/log/kvlab-dockerd.log}
WAIT_SECONDS=${KVLAB_DOCKERD_WAIT:-60}

say() { printf '[docker-engine] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# shellcheck source=as-root.sh
. "$(dirname "${BASH_SOURCE[0]}")/as-root.sh"

# Whether an engine answers at all, whatever API version the environment asks for.
engine_answers() { env -u DOCKER_API_VERSION docker info >/dev/null 2>&1; }

# The client and the engine talk: `docker version` prints the engine's API version only then.
check_api_version() {
  local server_api
  if server_api=$(docker version --format '{{.Server.APIVersion}}' 2>/dev/null) && [ -n "$server_api" ]; then
    return 0
  fi
  server_api=$(env -u DOCKER_API_VERSION docker version --format '{{.Server.APIVersion}}' 2>/dev/null || true)
  die "the docker client cannot talk to the engine${DOCKER_API_VERSION:+ with DOCKER_API_VERSION=$DOCKER_API_VERSION}${server_api:+; the engine speaks API $server_api: export DOCKER_API_VERSION=$server_api or unset it}"
}

if engine_answers; then
  check_api_version
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "no Docker engine answers and there is no apt-get to install one: start Docker, or set DOCKER_HOST"
  say "installing docker.io with apt"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  packages=(docker.io)
  # Debian bookworm's docker.io carries the client; from trixie on it is the docker-cli package.
  if ! command -v docker >/dev/null 2>&1 && apt-cache show docker-cli >/dev/null 2>&1; then
    packages+=(docker-cli)
  fi
  as_root apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
command -v docker >/dev/null 2>&1 || die "dockerd is installed but there is no docker client on PATH (Debian: apt-get install docker-cli, or docker.io on bookworm)"

dockerd_pid=
if [ -z "${DOCKER_HOST:-}" ] && ! pgrep -x dockerd >/dev/null 2>&1; then
  say "starting dockerd (log: $LOG)"
  # setsid: the engine outlives this script and the make or CI step that ran it.
  dockerd_pid=$(as_root sh -c "mkdir -p \"\$(dirname '$LOG')\" && setsid dockerd >>'$LOG' 2>&1 </dev/null & echo \$!")
fi

for ((waited = 0; waited < WAIT_SECONDS; waited++)); do
  if engine_answers; then
    check_api_version
    say "engine up: Docker $(docker version --format '{{.Server.Version}}, API {{.Server.APIVersion}}')"
    exit 0
  fi
  if [ -n "$dockerd_pid" ] && [ ! -d "/proc/$dockerd_pid" ]; then
    say "dockerd exited at start"
    break
  fi
  sleep 1
done

say "no answer from the Docker engine after ${waited}s${DOCKER_HOST:+ at DOCKER_HOST=$DOCKER_HOST}"
if [ -r "$LOG" ]; then
  say "last lines of $LOG:"
  tail -n 20 "$LOG" >&2
fi
docker info >&2 || true
exit 1
