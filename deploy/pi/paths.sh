# What deploy/pi/install and deploy/pi/uninstall share: the installed paths and small helpers. Sourced, not run.
# shellcheck shell=bash

SERVICE_USER=telemetry
PYTHON_UNIT=telemetry-gateway.service
NODE_UNIT=telemetry-gateway-node.service
CONFIG_DIR=/etc/telemetry-gateway
STATE_DIR=/var/lib/telemetry-gateway
PYTHON_HOME=/opt/telemetry-gateway
NODE_HOME=/opt/telemetry-gateway-node
SYSUSERS_FILE=/etc/sysusers.d/telemetry-gateway.conf
UDEV_RULE=/etc/udev/rules.d/70-telemetry-serial.rules
MODULES_FILE=/etc/modules-load.d/telemetry-gateway.conf
# The ready [[alerts]] command (deploy/notify), for either gateway.
NOTIFIER=/usr/local/bin/telemetry-alert-webhook
# The schema runner (the Python venv's telemetry-schema-migrate) and the copy of schema/ it reads.
SCHEMA_MIGRATE=/usr/local/bin/telemetry-schema-migrate
SCHEMA_HOME=/opt/telemetry-gateway/schema
DEST=

say() { echo "${0##*/}: $*"; }
fail() { echo "${0##*/}: $*" >&2; exit 1; }

# R: the prefix of every path written ("" for /). Without --root this is the real system: root only.
resolve_root() {
  if [[ -n $DEST ]]; then
    mkdir -p "$DEST"
    R=$(cd "$DEST" && pwd)
    [[ $R != / ]] || fail "--root / is the system itself: leave --root out"
  else
    R=
    ((EUID == 0)) || fail "run as root (sudo $0), or try it out with --root DIR"
    command -v systemctl >/dev/null || fail "systemctl is missing: this is for a systemd system"
  fi
}

# chown, where this process may (root; with --root as another user the files keep that user as owner).
own() {
  if ((EUID == 0)); then chown "$@"; fi
}

# SERVICE_UID and SERVICE_GID from $R/etc/passwd (written by systemd-sysusers).
service_ids() {
  local entry
  entry=$(awk -F: -v u="$SERVICE_USER" '$1 == u { print $3 ":" $4 }' "$R/etc/passwd")
  [[ -n $entry ]] || fail "no user $SERVICE_USER in $R/etc/passwd after systemd-sysusers"
  SERVICE_UID=${entry%:*}
  SERVICE_GID=${entry#*:}
}
