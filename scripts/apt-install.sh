#!/usr/bin/env bash
# Install Debian packages when they are missing (needs root or sudo).
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
  echo "Please install these Debian packages: $*" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
