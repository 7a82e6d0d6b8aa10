#!/usr/bin/env bash
# `make install` (install.mk): with DESTDIR and PREFIX=/usr it lays out the
# expected tree and nothing else, the programs as built, the recipes with the
# files they name by relative path, every man page (each linting clean), and
# serve's unit and sysusers.d file: the unit passes systemd-analyze verify
# (ExecStart pointed at DESTDIR's binary, its man: pages looked up in
# DESTDIR), sets what a deployment needs, and its data folder is the one the
# commands use by default. The default PREFIX (/usr/local) puts ExecStart
# there. Runs unprivileged; nothing outside a temporary folder is written.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
export LC_ALL=C

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# make as a person runs it, also under `make check` (the parent's jobserver would change nothing
# here, but its MAKEFLAGS could carry variables).
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$SRC" BUILD="$BUILD" "$@"; }
# mk_logged LOG ARGS...: mk with its output in LOG
mk_logged() {
	local log=$1
	shift
	mk "$@" >"$log" 2>&1
}

root=$work/root
if ! check "make install DESTDIR=... PREFIX=/usr" mk_logged "$work/install.log" install DESTDIR="$root" PREFIX=/usr; then
	tail -n 20 "$work/install.log" | diag
	done_testing
	exit 0
fi

# ---- the tree ----
unexpected=$(cd "$root" && find . -mindepth 1 \( -type f -o -type l \) | sed 's|^\./||' |
	grep -vE '^usr/(bin/bootci-(aggregator|builder|results)|lib/bootci/(bootci-(executor|efi|collect)|fixtures/[^/]+)|share/bootci/(images|initramfs|initramfs/testlists)/[^/]+|share/man/man[158]/bootci[a-z.-]*\.[158]|lib/systemd/system/bootci-serve\.service|lib/sysusers\.d/bootci\.conf)$')
check "nothing installed outside the expected places${unexpected:+: ${unexpected//$'\n'/ }}" test -z "$unexpected"

same=1
for f in bin/bootci-aggregator:host/bin/bootci-aggregator bin/bootci-builder:host/bin/bootci-builder \
	bin/bootci-results:host/bin/bootci-results lib/bootci/bootci-executor:musl/bin/bootci-executor \
	lib/bootci/bootci-efi:musl/bin/bootci-efi lib/bootci/bootci-collect:musl/bin/bootci-collect; do
	installed=$root/usr/${f%%:*} built=$BUILD/${f#*:}
	if [ ! -x "$installed" ] || ! cmp -s "$installed" "$built"; then
		echo "$installed: not the executable $built" | diag
		same=0
	fi
done
check "the programs: bin/ (master, build host) and lib/bootci/ (the images'), as built" test $same = 1
check "bootci-executor and bootci-efi in lib/bootci/ are the static musl builds" \
	bash -c '! readelf -lW "$1" | grep -q INTERP && ! readelf -lW "$2" | grep -q INTERP' _ \
	"$root/usr/lib/bootci/bootci-executor" "$root/usr/lib/bootci/bootci-efi"
fixtures=$(find "$BUILD/musl/bin/fixtures" -type f | wc -l)
check "the lab's fixtures in lib/bootci/fixtures/ ($fixtures)" \
	test "$fixtures" -gt 0 -a "$(find "$root/usr/lib/bootci/fixtures" -type f | wc -l)" = "$fixtures"

# The recipes: every relative path they name (spec =, file =, program = ...) is installed beside them.
missing=
for recipe in "$root"/usr/share/bootci/images/*.conf; do
	[ "$(basename "$recipe")" = known-good-collect.conf ] && continue
	[ "$(basename "$recipe")" = known-good-executor.conf ] && continue
	while read -r path; do
		[ -e "$(dirname "$recipe")/$path" ] || missing+=" $(basename "$recipe"): $path"
	done < <(sed -nE 's/^(spec|file|program)[[:space:]]*=[[:space:]]*([^$/[:space:]][^[:space:]]*).*/\2/p' "$recipe")
done
check "the recipes are installed with every file they name by relative path${missing:+:$missing}" \
	test -e "$root/usr/share/bootci/images/test-image.conf" -a \
	-e "$root/usr/share/bootci/images/known-good.conf" -a -z "$missing"
check "the test image's spec, executor.conf and testlists in share/bootci/initramfs/" \
	test -s "$root/usr/share/bootci/initramfs/test.spec" -a -s "$root/usr/share/bootci/initramfs/executor.conf" \
	-a "$(find "$root/usr/share/bootci/initramfs/testlists" -type f | wc -l)" = \
	"$(find "$SRC/initramfs/testlists" -name '*.txt' | wc -l)"

# ---- the man pages ----
built=$(find "$BUILD/man" -type f -printf '%f\n' | sort)
installed=$(find "$root/usr/share/man" -type f -printf '%f\n' | sort)
check "every page of \$BUILD/man is installed in share/man/man{1,5,8}/ ($(echo "$built" | wc -l))" \
	test -n "$built" -a "$built" = "$installed"
lint=
for page in "$root"/usr/share/man/man?/*; do
	if ! out=$(mandoc -T lint -W warning "$page" 2>&1) || [ -n "$out" ]; then
		lint+="$page: $out"$'\n'
	fi
done
check "every installed page lints clean (mandoc -T lint -W warning)" test -z "$lint" ||
	printf '%s' "$lint" | diag
check "man finds an installed page by name (MANPATH=DESTDIR's)" \
	test "$(MANPATH=$root/usr/share/man man -w bootci-aggregator-serve 2>/dev/null)" = \
	"$root/usr/share/man/man1/bootci-aggregator-serve.1"

# ---- serve's unit ----
unit=$root/usr/lib/systemd/system/bootci-serve.service
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
check "the unit's ExecStart is PREFIX's bin/bootci-aggregator ($exec_start), installed" \
	test "$exec_start" = /usr/bin/bootci-aggregator -a -x "$root$exec_start"
mkdir -p "$work/verify"
sed "s|^ExecStart=/usr/bin/|ExecStart=$root/usr/bin/|" "$unit" >"$work/verify/bootci-serve.service"
out=$(MANPATH=$root/usr/share/man systemd-analyze verify "$work/verify/bootci-serve.service" 2>&1)
status=$?
check "systemd-analyze verify: no complaint, its man: pages found" test $status = 0 -a -z "$out" ||
	printf '%s\n' "$out" | diag
# What the deployment needs from it, as a list of lines (systemd-analyze verify only checks they parse).
absent=
for line in User=bootci StateDirectory=bootci Environment=GLIBC_TUNABLES=glibc.malloc.hugetlb=1 \
	NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes \
	'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' SystemCallFilter=@system-service CapabilityBoundingSet=; do
	grep -qxF "$line" "$unit" || absent+=" '$line'"
done
check "the unit runs serve as bootci, with huge pages and the usual hardening${absent:+ (no$absent)}" test -z "$absent"
# serve's --data is the StateDirectory, and the folder every other command takes by default.
default=$("$root/usr/bin/bootci-aggregator" --help | sed -n 's/.*else \(\/[a-z/]*\)).*/\1/p' | head -n 1)
check "its --data is /var/lib/bootci (the StateDirectory), the commands' default ($default)" \
	bash -c 'grep -q -- "--data /var/lib/bootci " "$1" && test "$2" = /var/lib/bootci' _ "$unit" "$default"
out=$(systemd-sysusers --root="$root" --dry-run 2>&1)
check "the sysusers.d file creates the user bootci (systemd-sysusers --dry-run)" \
	grep -q "Creating user 'bootci'" <<<"$out" || printf '%s\n' "$out" | diag

# ---- the default PREFIX ----
if check "make install DESTDIR=... (default PREFIX)" mk_logged "$work/local.log" install DESTDIR="$work/local"; then
	check "the default PREFIX is /usr/local, the unit's ExecStart under it" \
		bash -c 'test -x "$1/usr/local/bin/bootci-aggregator" && grep -q "^ExecStart=/usr/local/bin/bootci-aggregator serve" \
		"$1/usr/local/lib/systemd/system/bootci-serve.service"' _ "$work/local"
else
	tail -n 20 "$work/local.log" | diag
fi
done_testing
