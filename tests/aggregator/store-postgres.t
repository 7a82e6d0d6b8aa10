#!/usr/bin/env bash
# The store's unit suites (tests/unit/test_store.c, test_ingest.c, test_schedule.c, test_report.c,
# test_pages.c, test_machine_pages.c, test_mail.c's outbox, test_patchwork.c) against a
# real PostgreSQL server of their own: Debian's postgresql 15, a cluster made
# by initdb in a temporary folder, listening only on a Unix socket in that
# folder (no TCP), run as the unprivileged `postgres` user when this script
# runs as root (PostgreSQL refuses root). The server is stopped and the
# folder removed on every exit, failures included.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

pgbin=/usr/lib/postgresql/15/bin
suites=(test_store test_ingest test_report test_schedule test_pages test_machine_pages test_mail test_patchwork)
if [ ! -x "$pgbin/initdb" ] || [ ! -x "$pgbin/pg_ctl" ]; then
	plan 1
	not_ok "PostgreSQL 15 server binaries in $pgbin (Debian package postgresql-15)"
	exit 1
fi

work=$(mktemp -d /tmp/bootci-pg.XXXXXX)
chmod 0755 "$work"
run_as=()
if [ "$(id -u)" = 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		plan 1
		not_ok "an unprivileged 'postgres' user to run the server (the package creates it)"
		rm -rf "$work"
		exit 1
	fi
	run_as=(runuser -u postgres --)
	mkdir "$work/db" "$work/sock"
	chown postgres: "$work/db" "$work/sock"
else
	mkdir "$work/db" "$work/sock"
fi

stop_server() {
	if [ -f "$work/db/postmaster.pid" ]; then
		"${run_as[@]}" "$pgbin/pg_ctl" -D "$work/db" -m immediate -w -t 30 stop >/dev/null 2>&1
		# pg_ctl could not stop it: end the postmaster by its recorded pid, nothing broader.
		if [ -f "$work/db/postmaster.pid" ]; then
			pid=$(head -n1 "$work/db/postmaster.pid")
			[ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
		fi
	fi
	rm -rf "$work"
}
trap stop_server EXIT
# A signal (the harness's time limit, ^C) ends the script through exit, so the EXIT trap runs.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

n_tests=$((2 + 2 * ${#suites[@]} + 1))
plan "$n_tests"

if "${run_as[@]}" "$pgbin/initdb" -D "$work/db" -U postgres --auth=trust --encoding=UTF8 \
	--locale=C.UTF-8 >"$work/initdb.log" 2>&1; then
	ok "initdb made a cluster in a temporary folder"
else
	not_ok "initdb made a cluster in a temporary folder"
	diag <"$work/initdb.log"
	exit 1
fi

# fsync off: the cluster is thrown away after the test. No TCP listener at all.
if "${run_as[@]}" "$pgbin/pg_ctl" -D "$work/db" -l "$work/sock/server.log" -w -t 60 \
	-o "-k $work/sock -c listen_addresses= -F" start >"$work/start.log" 2>&1; then
	ok "the server started on a Unix socket only"
else
	not_ok "the server started on a Unix socket only"
	diag <"$work/start.log"
	[ ! -f "$work/sock/server.log" ] || diag <"$work/sock/server.log"
	exit 1
fi

conninfo="host=$work/sock dbname=postgres user=postgres"
for suite in "${suites[@]}"; do
	for flavor in host asan; do
		bin=$BUILD/$flavor/tests/$suite
		if [ ! -x "$bin" ]; then
			not_ok "$suite ($flavor) against PostgreSQL: $bin is not built"
			continue
		fi
		if BOOTCI_TEST_STORE_URL=$conninfo "$bin" >"$work/$suite-$flavor.log" 2>&1; then
			ok "$suite ($flavor) against PostgreSQL: $(grep -c '^\[       OK' "$work/$suite-$flavor.log") tests pass"
		else
			not_ok "$suite ($flavor) against PostgreSQL"
			diag <"$work/$suite-$flavor.log"
		fi
	done
done

# The URL form names the same server (the socket folder as the host parameter).
url="postgresql:///postgres?host=$work/sock&user=postgres"
if "$BUILD/host/bin/bootci-aggregator" ingest --store "$url" --data "$work/data" \
	--machine lab-pg "$SRC/tests/resultgen/scenarios/piglit-style-default-level" >"$work/cli.log" 2>&1; then
	ok "bootci-aggregator ingest --store postgresql://... stores a run"
else
	not_ok "bootci-aggregator ingest --store postgresql://... stores a run"
	diag <"$work/cli.log"
fi
