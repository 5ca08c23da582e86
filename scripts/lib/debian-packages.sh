# shellcheck shell=bash
# Installs Debian packages that are missing (apt-get from the Debian mirror; needs root), for
# the scripts that run the node and build its images (scripts/cluster.sh, scripts/images.sh).
# The sourcing script defines `log` (its own prefix on stderr).
#
#   ensure_debian_packages PACKAGE…   installs those of PACKAGE… that dpkg does not list as
#                                     installed; exits 1 when some are missing and not root

ensure_debian_packages() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing from Debian: ${missing[*]}"
  [ "$(id -u)" = 0 ] || { log "must run as root to install ${missing[*]}"; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
