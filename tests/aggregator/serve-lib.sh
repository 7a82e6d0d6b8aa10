# shellcheck shell=bash
# Sourced by tests/aggregator/serve*.t: a real `bootci-aggregator serve` on
# 127.0.0.1 with a port of its own choosing (port 0, read from --port-file),
# machines with tokens, and the checks that nothing of a refused upload stays.
: "${BUILD:?}" "${SRC:?}"
# BOOTCI_AGGREGATOR: another build of it (an ASan one) under test.
aggregator=${BOOTCI_AGGREGATOR:-$BUILD/host/bin/bootci-aggregator}
tool=$SRC/tests/aggregator/serve-tool.py
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

work=$(mktemp -d)
server_pid=
cleanup() {
	[ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# add_machine NAME TOKEN: enrols NAME in $work/tokens (only the digest is written).
add_machine() {
	printf '%s sha256:%s\n' "$1" "$(printf %s "$2" | sha256sum | cut -d' ' -f1)" >>"$work/tokens"
}

# start_server [OPTIONS...]: starts serve on $work/data, sets $server_pid, $port, $base.
start_server() {
	rm -f "$work/port"
	"$aggregator" serve --data "$work/data" --listen 127.0.0.1:0 --tokens "$work/tokens" \
		--port-file "$work/port" "$@" >>"$work/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		[ -s "$work/port" ] && break
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -s "$work/port" ]; then
		echo "Bail out! serve did not start:"
		diag <"$work/server.log"
		exit 1
	fi
	port=$(cat "$work/port")
	base=http://127.0.0.1:$port
}

# stop_server: SIGTERM, and waits for the exit (its status in $server_status).
stop_server() {
	kill -TERM "$server_pid"
	wait "$server_pid"
	server_status=$?
	server_pid=
}

run_url() { echo "$base/api/v1/machines/$1/runs/$2"; }

# run_up MACHINE RUN_ID BUILD SPEC...: a run of MACHINE (report-runs.py's SPECs) ingested by
# hand into $work/data, as its upload would be; ingest's output to $work/setup.log
run_up() {
	local dir=$work/runs/$1-$2
	/usr/bin/python3 "$SRC/tests/aggregator/report-runs.py" "$dir" "${@:4}" >/dev/null &&
		"$aggregator" ingest --data "$work/data" --machine "$1" --run-id "$2" --build "$3" \
			"$dir" >>"$work/setup.log" 2>&1
}

# jobs_of BUILD: `schedule jobs BUILD`, a job a line
jobs_of() { "$aggregator" schedule jobs "$1" --data "$work/data" 2>&1; }

# log_line SECONDS REGEX: the first line of serve's log matching REGEX, once there (1: none came)
log_line() {
	local until=$((SECONDS + $1)) line
	while [ $SECONDS -lt "$until" ]; do
		line=$(grep -a -m 1 -E "$2" "$work/server.log") && { echo "$line"; return 0; }
		sleep 0.5
	done
	return 1
}

# wait_until COMMAND...: runs COMMAND every 0.1 s until it succeeds, for at most 20 s; its
# last status. A step that depends on the server having got somewhere waits for that state
# instead of a fixed time (the tests run beside the QEMU lab, tests/run-tests.sh).
wait_until() {
	local i
	for ((i = 0; i < 200; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# part_has MACHINE RUN: the server holds bytes of that upload in incoming/.
part_has() { [ -s "$work/data/incoming/$1/$2.part" ]; }

# nothing_kept MACHINE RUN: no record, no partial upload, no archive but the $kept ones.
nothing_kept() {
	local archives
	archives=$(find "$work/data/archives" -type f | wc -l)
	[ ! -e "$work/data/runs/$1/$2.json" ] && [ ! -e "$work/data/incoming/$1/$2.part" ] &&
		[ ! -e "$work/data/incoming/$1/$2.sha256" ] && [ "$archives" = "${kept:-0}" ]
}
