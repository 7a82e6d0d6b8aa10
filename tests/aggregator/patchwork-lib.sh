# shellcheck shell=bash
# The real Patchwork 3.1.3 (../shared/patchwork/) on 127.0.0.1 for tests/aggregator/patchwork.t,
# tests/bench/patchwork-latency.sh and the demo's list (tests/lab/list.sh), sourced with $SRC (the
# tree) and $work (a folder of the caller's, mode 0755: Patchwork's user reads it) set:
#   pw_missing               why Patchwork cannot run here (the tarball, Debian's Django
#                            packages), or nothing: the caller skips and says it
#   pw_unpack                unpacks it into $work/pw, owned by `nobody` when root (its user:
#                            `admin` and the server run as it), picks a free port ($pw_url)
#   admin COMMAND ARGS...    patchwork-admin.py on it, as its user
#   pw_run / pw_stop         runserver in the background (its PID in $pw_pid), ready when the API
#                            answers (pw_run: 1 when it did not start, its log $work/patchwork.log)
#   pw_repo DIR              the "kernel tree": a git repository with one commit (its id in
#                            $base_commit) by Ann Dev <ann@bootci.test>, who mails the series
#   pw_image DIR             a small test-image folder with its bootci-builder manifest
#   pw_build_command PATH IMAGE [SECONDS]
#                            the lab's build command as a script: a fresh clone of BASE at BRANCH
#                            (a branch or a commit), `git am` of the series' mbox unless it is
#                            empty (exit 3 when it does not apply), a tree holding a file BROKEN
#                            does not build (exit 1), SECONDS of "build", then IMAGE copied into
#                            OUT and the commit in OUT/commit
: "${SRC:?}" "${work:?}"
python=/usr/bin/python3
admin=$SRC/tests/aggregator/patchwork-admin.py
tarball=$SRC/../shared/patchwork/patchwork-3.1.3.tar.xz

pw_missing() {
	if [ ! -f "$tarball" ]; then
		echo "$tarball is absent"
	elif ! "$python" -c 'import django, rest_framework, django_filters' 2>/dev/null; then
		echo "Debian's python3-django, python3-djangorestframework or python3-django-filters missing"
	fi
}

pw_unpack() {
	pw=$work/pw
	mkdir -p "$pw"
	tar -xf "$tarball" -C "$pw"
	pw_src=$pw/patchwork-3.1.3
	run_as=()
	if [ "$(id -u)" = 0 ]; then
		run_as=(setpriv --reuid nobody --regid nogroup --clear-groups --)
		chown -R nobody:nogroup "$pw"
	fi
	pw_env=(env PYTHONPATH="$pw:$pw_src" DJANGO_SETTINGS_MODULE=bootci_pw_settings HOME="$pw")
	pw_pid=
	pw_port=$("$python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
	pw_url=http://127.0.0.1:$pw_port
}

admin() { "${run_as[@]}" "${pw_env[@]}" "$python" "$admin" "$1" "$pw" "${@:2}"; }

pw_run() {
	local i
	(cd "$pw" && exec "${run_as[@]}" "${pw_env[@]}" "$python" "$pw_src/manage.py" runserver \
		--noreload "127.0.0.1:$pw_port" >>"$work/patchwork.log" 2>&1) &
	pw_pid=$!
	for ((i = 0; i < 300; i++)); do
		curl -sf -o /dev/null "$pw_url/api/1.2/" && return 0
		sleep 0.1
	done
	return 1
}

pw_stop() {
	kill -TERM "$pw_pid" 2>/dev/null
	wait "$pw_pid" 2>/dev/null
	pw_pid=
}

pw_repo() {
	git init -q "$1"
	git -C "$1" config user.name 'Ann Dev'
	git -C "$1" config user.email ann@bootci.test
	echo base >"$1/README"
	git -C "$1" add README
	git -C "$1" commit -qm base
	# shellcheck disable=SC2034 # the caller's
	base_commit=$(git -C "$1" rev-parse HEAD)
}

pw_image() {
	local dir=$1 f
	mkdir -p "$dir"
	head -c 4096 /dev/urandom >"$dir/vmlinuz"
	head -c 8192 /dev/urandom >"$dir/initrd.img"
	printf '#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0\ninitrd initrd.img\nboot\n' >"$dir/boot.ipxe"
	printf 'igt@core@a\nigt@core@b\n' >"$dir/fast.testlist"
	printf 'igt@t@1\nigt@t@2\n' >"$dir/full.testlist"
	{
		echo "# bootci-builder manifest: SHA256 SIZE MODE PATH ORIGIN"
		for f in boot.ipxe initrd.img vmlinuz; do
			printf '%s %s 100644 %s bootci-builder\n' "$(sha256sum <"$dir/$f" | cut -d' ' -f1)" \
				"$(stat -c %s "$dir/$f")" "$f"
		done
	} >"$dir/manifest"
}

# pw_build_command PATH IMAGE [SECONDS] [testlists]: writes PATH, a build command (MBOX BASE
# BRANCH OUT) that applies the series to a clone of BASE and copies the prebuilt IMAGE folder
# into OUT, after SECONDS; with testlists, the tree's own testlists replace the image's.
pw_build_command() {
	local path=$1 image=$2 seconds=${3:-0} testlists=
	[ "${4:-}" = testlists ] && testlists='cp fast.testlist full.testlist "$4/"'
	cat >"$path" <<SCRIPT
#!/bin/sh
# MBOX BASE BRANCH OUT
set -u
tmp=\$(mktemp -d)
trap 'rm -rf "\$tmp"' EXIT
git clone -q "\$2" "\$tmp/tree" || exit 1
cd "\$tmp/tree" || exit 1
git checkout -q "\$3" || exit 1
# An empty mbox: the tree at BRANCH (a commit) as it is (a tree's bisection).
[ ! -s "\$1" ] || git -c user.name=bootci -c user.email=ci@bootci.test am "\$1" || exit 3
[ ! -e BROKEN ] || exit 1
sleep $seconds
git rev-parse HEAD >"\$4/commit"
cp "$image"/* "\$4/"
$testlists
SCRIPT
	chmod 0755 "$path"
}

# pw_test_begin: a TAP test's Patchwork, ready to start: the test skipped (exit 0) when Patchwork
# cannot run here; $data made, $work/tokens empty, Patchwork unpacked and its project
# bootci-test made, the CI's token in $work/ci.token and a visitor's in $work/visitor.token.
# A set-up that fails bails out.
pw_test_begin() {
	local missing ci_token visitor_token
	missing=$(pw_missing)
	if [ -n "$missing" ]; then
		echo "1..0 # SKIP $missing"
		exit 0
	fi
	data=$work/data
	mkdir -p "$data"
	: >"$work/tokens"
	chmod 0755 "$work"
	pw_unpack
	admin settings
	read -r ci_token visitor_token < <(admin setup bootci-test bootci-test.lists.bootci.test) || true
	if [ -z "${visitor_token:-}" ]; then
		echo "Bail out! Patchwork's set-up failed"
		exit 1
	fi
	printf '%s\n' "$ci_token" >"$work/ci.token"
	printf '%s\n' "$visitor_token" >"$work/visitor.token"
}
