#!/usr/bin/env bash
# Installs the Debian packages IGT 1.27.1 builds with (../shared/igt/README.md),
# the way host-deps.sh installs bootci's own: only what is missing, and no
# network at all when everything is already there.
set -euo pipefail

packages=(
	meson ninja-build pkg-config libdrm-dev libpciaccess-dev libproc2-dev libcairo2-dev
	libpixman-1-dev libudev-dev libglib2.0-dev libdw-dev libunwind-dev libjson-c-dev
	libelf-dev python3-docutils xz-utils
)

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != 'install ok installed' ]; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "igt-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -q >/dev/null
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
