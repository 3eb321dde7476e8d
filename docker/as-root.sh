# Sourced by the docker/ scripts once they define die: as_root CMD... runs CMD as root, directly
# when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "needs root for: $*"
  fi
}
