# shellcheck shell=bash
# Sourced by the lab scenarios and the demo that need a CI master: `bootci-aggregator serve`
# on the host's loopback (the guest reaches it as 10.0.2.2 through QEMU's user network),
# started and stopped by the caller, never left behind. Needs AGGREGATOR (the binary).

# master_free_port: a TCP port free on 127.0.0.1 right now. The master is started after the
# machine is enrolled (its address is on the machine's disk) and again after a SIGKILL, so the
# port is chosen once instead of taking whatever port 0 gives each time. It is taken below the
# kernel's ephemeral range (net.ipv4.ip_local_port_range), where no client's connection and no
# server listening on port 0 (the tests running beside the lab, tests/run-tests.sh) can get it
# between this choice and serve's bind; only another lab scenario could, and those run one at a time.
master_free_port() {
	python3 -c 'import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for port in random.sample(range(max(1024, low - 12000), low), 200):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("master_free_port: no free port below %d" % low)'
}

# master_token_line MACHINE TOKEN: the serve token file's line for MACHINE (only the digest)
master_token_line() {
	printf '%s sha256:%s\n' "$1" "$(printf %s "$2" | sha256sum | cut -d' ' -f1)"
}

# master_start DATA_DIR PORT TOKENS_FILE LOG: starts serve in the background; sets MASTER_PID.
# Returns 0 once GET /api/v1/health answers 200, 1 when it did not within 20 s (then it is stopped).
master_start() {
	local data=$1 port=$2 tokens=$3 log=$4 tries=0
	mkdir -p "$data"
	"$AGGREGATOR" serve --data "$data" --listen "127.0.0.1:$port" --tokens "$tokens" \
		>>"$log" 2>&1 &
	MASTER_PID=$!
	while [ $tries -lt 100 ]; do
		if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/api/v1/health" 2>/dev/null; then
			return 0
		fi
		kill -0 "$MASTER_PID" 2>/dev/null || break
		sleep 0.2
		tries=$((tries + 1))
	done
	echo "master on 127.0.0.1:$port did not answer; its log ($log):" >&2
	tail -n 20 "$log" >&2
	master_stop
	return 1
}

# master_stop: SIGTERM (serve finishes what is in flight), then SIGKILL after 20 s; waits for it
master_stop() {
	[ -n "${MASTER_PID:-}" ] || return 0
	kill -TERM "$MASTER_PID" 2>/dev/null || true
	local tries=0
	while kill -0 "$MASTER_PID" 2>/dev/null && [ $tries -lt 100 ]; do
		sleep 0.2
		tries=$((tries + 1))
	done
	kill -KILL "$MASTER_PID" 2>/dev/null || true
	wait "$MASTER_PID" 2>/dev/null || true
	MASTER_PID=""
}

# master_kill: SIGKILL, nothing finished, as a crash or power loss of the master would be
master_kill() {
	[ -n "${MASTER_PID:-}" ] || return 0
	kill -KILL "$MASTER_PID" 2>/dev/null || true
	wait "$MASTER_PID" 2>/dev/null || true
	MASTER_PID=""
}

# master_run_state PORT MACHINE TOKEN RUN: serve's answer to GET of the run (JSON), or nothing
master_run_state() {
	curl -sS --max-time 10 -H "Authorization: Bearer $3" \
		"http://127.0.0.1:$1/api/v1/machines/$2/runs/$4" 2>/dev/null
}

# tree_digests DIR: "sha256  path" of every regular file under DIR, sorted by path
tree_digests() {
	(cd "$1" && find . -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 -r sha256sum)
}
