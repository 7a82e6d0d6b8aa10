#!/usr/bin/env bash
# Installs the Debian packages bootci builds and tests with, and the deb-src
# entry that `apt-get source` needs. Idempotent: a second run changes nothing
# and does not touch the network when everything is already there.
set -euo pipefail

packages=(
	# toolchains and build tools
	build-essential musl-tools pkg-config clang libclang-rt-14-dev
	autoconf automake libtool autopoint gettext bison flex dpkg-dev cmake
	# host libraries (the builder, the aggregator, unit tests)
	libcmocka-dev libarchive-dev libkmod-dev libblkid-dev
	# the CI master side of the aggregator (serve, store, collect's upload)
	libmicrohttpd-dev libgnutls28-dev nettle-dev libjson-c-dev libcurl4-openssl-dev libzstd-dev
	libsqlite3-dev libpq-dev postgresql curl
	# the known-good image's CA bundle; the self-signed master certificate of upload-host.t
	ca-certificates openssl
	# the test image and the lab
	busybox-static kmod qemu-system-x86 ovmf ipxe-qemu systemd-boot-efi
	fdisk dosfstools mtools e2fsprogs xz-utils zstd cpio
	# the lab's BMCs (ipmi_sim) and the master's ipmi power driver (ipmitool)
	openipmi ipmitool
	# the lab's console server in front of each machine's serial line (tests/aggregator/console.t)
	ser2net
	# the lab's SMTP server on loopback that the master's replies go to (tests/aggregator/mail.t)
	python3-aiosmtpd
	# Patchwork 3.1.3's dependencies (../shared/patchwork/, tests/aggregator/patchwork.t) and its
	# command-line client, which reads the checks back
	python3-django python3-djangorestframework python3-django-filters git-pw
	# test scripts (JSON comparisons; KCIDB's schema checked by jsonschema; the reply read by git mailinfo;
	# the JUnit export validated by xmllint against the Jenkins xUnit plugin's junit-10.xsd)
	python3 python3-jsonschema git libxml2-utils
	# the store read back by the tests (sqlite3's command line)
	sqlite3
	# ingest.t counts the threads ingest --jobs auto starts
	strace
	# the pages served by the master, checked in a real browser (tests/aggregator/pages-browser.t)
	chromium
	# make bench: wall, CPU and peak memory of each side (GNU time's -f)
	time
	# the man pages: scdoc builds them, mandoc lints them; systemd-analyze verifies serve's unit
	scdoc mandoc systemd
)

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi

src_list=/etc/apt/sources.list.d/bootci-deb-src.sources
need_update=0
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "host-deps: adding the deb-src entry $src_list"
	"${sudo_cmd[@]}" tee "$src_list" >/dev/null <<'SRC'
# Added by bootci (builder/setup/host-deps.sh): source packages for the musl sysroot.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	need_update=1
fi

missing=()
for p in "${packages[@]}"; do
	[[ $p == \#* ]] && continue
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != 'install ok installed' ]; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -gt 0 ] || [ $need_update = 1 ] || [ ! -d /var/lib/apt/lists ] ||
	! ls /var/lib/apt/lists/*Sources* >/dev/null 2>&1; then
	echo "host-deps: apt-get update"
	"${sudo_cmd[@]}" apt-get update -q >/dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "host-deps: installing ${missing[*]}"
	"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
