# shellcheck shell=bash
# Sourced by `make demo` (tests/lab/demo) and tests/lab/loop.t: the lab run by its master, the
# lab side of it. A master (`bootci-aggregator serve` on 127.0.0.1, tests/lab/master.sh) with an
# inventory of QEMU machines whose power command is `lab power DIR cycle`, or (LOOP_POWER=ipmi)
# whose power driver is ipmi, each machine with its own BMC (`lab bmc`: ipmi_sim); each machine's
# firmware netboots one fixed iPXE script chaining to /api/v1/boot/${net0/mac}; builds and the
# known-good image are published over HTTP with a publisher's token. Needs AGGREGATOR, LAB and
# master.sh sourced. The caller sets, before loop_master_start:
#   LOOP_WORK          a fresh folder for everything (master data, machines, tokens, logs)
#   LOOP_NAMES         the machines' names (array); their MACs are 52:54:00:b0:07:01, :02, ...
#   LOOP_GROUP         their shard group (empty: none)
#   LOOP_TREE_FULL     the tree's full-tier rule for tree LOOP_TREE (gated, always, never)
#   LOOP_DEADLINE      a machine's deadline (inventory syntax, e.g. 10m); LOOP_DEADLINES[I],
#                      when set, is machine I's instead
#   LOOP_POWER_CYCLES  the inventory's power-cycles (default 2)
#   LOOP_RERUNS        the inventory's reruns of possible new issues (default 0: none, so a
#                      scenario's machine time stays its own) and LOOP_RERUN_BUDGET its
#                      rerun-budget (default 10%)
#   LOOP_SCHEDULE_EXTRA lines appended to the inventory's [schedule] as they are (default
#                      none), e.g. "bisect-steps = 4"
#   LOOP_POWER_WRAP[I] words put before machine I's power command (e.g. /usr/bin/env VAR=...)
#   LOOP_POWER         command (default): `lab power DIR cycle`; ipmi: the master powers every
#                      machine through its BMC (ipmitool), never through the lab script; the
#                      BMCs' UDP ports are LOOP_BMC_PORTS[I], chosen by loop_master_start
#   LOOP_CONSOLE       none (default): the master reads no console; ser2net: each machine's
#                      serial line fronted by ser2net (`lab console`) on LOOP_CONSOLE_PORTS[I]
#                      (QEMU's end on LOOP_SERIAL_PORTS[I]), the inventory's console key names it
#                      and serve captures every boot's console
#   LOOP_KNOWN_ISSUES  the lab's known-issue filters (default tests/lab/loop/known-issues.txt)
# and calls loop_stop from an EXIT trap: it powers every machine off and stops the master.

LOOP_TREE=${LOOP_TREE:-lab-loop}

loop_say() {
	printf '%s %s\n' "[$(date -u +%H:%M:%S)]" "$*"
}

# loop_mac I: the MAC of machine I (0-based)
loop_mac() {
	printf '52:54:00:b0:07:%02x' $(($1 + 1))
}

# loop_dir NAME: the machine's folder
loop_dir() {
	# shellcheck disable=SC2153 # LOOP_WORK: set by the caller (above)
	echo "$LOOP_WORK/machines/$1"
}

# loop_master_start: the master's data folder (inventory, the machines' and the publisher's
# tokens), then serve (on LOOP_PORT when the caller chose it: its other configuration files,
# written into LOOP_WORK/master first, may need the address). Sets LOOP_PORT, LOOP_MASTER (the host's URL), LOOP_GUEST_MASTER (the
# guests' URL) and LOOP_DATA. BOOTCI_SCHEDULE_TICK (default 2 s here) is how often serve's
# scheduler looks at the lab.
loop_master_start() {
	local i name token
	LOOP_DATA=$LOOP_WORK/master
	mkdir -p "$LOOP_DATA" "$LOOP_WORK/machines" "$LOOP_WORK/tokens"
	LOOP_PORT=${LOOP_PORT:-$(master_free_port)}
	LOOP_MASTER=http://127.0.0.1:$LOOP_PORT
	LOOP_GUEST_MASTER=http://10.0.2.2:$LOOP_PORT
	: >"$LOOP_WORK/tokens/machines"
	LOOP_BMC_PORTS=()
	LOOP_CONSOLE_PORTS=()
	LOOP_SERIAL_PORTS=()
	{
		echo "# written by tests/lab/loop.sh"
		echo "[schedule]"
		echo "power-cycles = ${LOOP_POWER_CYCLES:-2}"
		echo "reruns = ${LOOP_RERUNS:-0}"
		echo "rerun-budget = ${LOOP_RERUN_BUDGET:-10%}"
		echo "power-timeout = 60s"
		[ -z "${LOOP_SCHEDULE_EXTRA:-}" ] || printf '%s\n' "$LOOP_SCHEDULE_EXTRA"
		for i in "${!LOOP_NAMES[@]}"; do
			name=${LOOP_NAMES[$i]}
			echo
			echo "[machine $name]"
			echo "mac = $(loop_mac "$i")"
			echo "tags = qemu, lab"
			[ -z "${LOOP_GROUP:-}" ] || echo "shard-group = $LOOP_GROUP"
			if [ "${LOOP_POWER:-command}" = ipmi ]; then
				LOOP_BMC_PORTS[i]=$(loop_bmc_port "${LOOP_BMC_PORTS[@]}" "${LOOP_CONSOLE_PORTS[@]}" "${LOOP_SERIAL_PORTS[@]}")
				echo "power = ipmi"
				echo "ipmi-host = 127.0.0.1"
				echo "ipmi-port = ${LOOP_BMC_PORTS[$i]}"
				echo "ipmi-user = admin"
				echo "ipmi-password-file = $(loop_dir "$name")/bmc/password"
			else
				echo "power = ${LOOP_POWER_WRAP[$i]:+${LOOP_POWER_WRAP[$i]} }$LAB power $(loop_dir "$name") cycle"
			fi
			if [ "${LOOP_CONSOLE:-none}" = ser2net ]; then
				LOOP_CONSOLE_PORTS[i]=$(loop_bmc_port "${LOOP_BMC_PORTS[@]}" "${LOOP_CONSOLE_PORTS[@]}" "${LOOP_SERIAL_PORTS[@]}")
				LOOP_SERIAL_PORTS[i]=$(loop_bmc_port "${LOOP_BMC_PORTS[@]}" "${LOOP_CONSOLE_PORTS[@]}" "${LOOP_SERIAL_PORTS[@]}")
				echo "console = tcp:127.0.0.1:${LOOP_CONSOLE_PORTS[$i]}"
			fi
			echo "deadline = ${LOOP_DEADLINES[$i]:-${LOOP_DEADLINE:-10m}}"
		done
		echo
		echo "[tree $LOOP_TREE]"
		echo "full = ${LOOP_TREE_FULL:-gated}"
	} >"$LOOP_DATA/machines.conf"
	cp "${LOOP_KNOWN_ISSUES:-$(dirname "$LAB")/loop/known-issues.txt}" "$LOOP_DATA/known-issues.txt"
	for name in "${LOOP_NAMES[@]}"; do
		token=$name-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
		printf '%s\n' "$token" >"$LOOP_WORK/tokens/$name"
		master_token_line "$name" "$token" >>"$LOOP_WORK/tokens/machines"
	done
	token=publisher-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	(umask 077 && printf '%s\n' "$token" >"$LOOP_WORK/tokens/publisher")
	master_token_line release "$token" >"$LOOP_DATA/publishers"
	export BOOTCI_SCHEDULE_TICK=${BOOTCI_SCHEDULE_TICK:-2}
	master_start "$LOOP_DATA" "$LOOP_PORT" "$LOOP_WORK/tokens/machines" "$LOOP_WORK/master.log"
}

# loop_bmc_port [TAKEN...]: a port free for both UDP (the BMC's IPMI-over-LAN) and TCP (its VM
# channel, QEMU's chardev) on 127.0.0.1, below the ephemeral range as master_free_port's, and
# none of TAKEN
loop_bmc_port() {
	python3 -c 'import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
taken = set(int(p) for p in sys.argv[1:])
for port in random.sample(range(max(1024, low - 12000), low), 200):
    if port in taken:
        continue
    try:
        for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            s = socket.socket(socket.AF_INET, kind)
            try:
                s.bind(("127.0.0.1", port))
            finally:
                s.close()
    except OSError:
        continue
    print(port)
    break
else:
    raise SystemExit("loop_bmc_port: no free port below %d" % low)' "$@"
}

# loop_publish_known_good VERSION IMAGE_DIR MANIFEST: over HTTP, as release tooling would
loop_publish_known_good() {
	"$AGGREGATOR" publish --known-good "$1" --manifest "$3" --master "$LOOP_MASTER" \
		--token-file "$LOOP_WORK/tokens/publisher" "$2"
}

# loop_publish BUILD IMAGE_DIR MANIFEST FAST_TESTLIST FULL_TESTLIST|- [publish options...]:
# the builder's test image and the two testlists, over HTTP
loop_publish() {
	local build=$1 image=$2 manifest=$3 fast=$4 full=$5 dir=$LOOP_WORK/publish/$1
	shift 5
	rm -rf "$dir" && mkdir -p "$dir"
	ln -s "$image/vmlinuz" "$image/initrd.img" "$image/boot.ipxe" "$dir/"
	cp "$fast" "$dir/fast.testlist"
	[ "$full" = - ] || cp "$full" "$dir/full.testlist"
	"$AGGREGATOR" publish --build "$build" --tree "$LOOP_TREE" --manifest "$manifest" \
		--master "$LOOP_MASTER" --token-file "$LOOP_WORK/tokens/publisher" "$@" "$dir"
}

# loop_machines_prepare KNOWN_GOOD_VERSION: every machine gets a disk written from the
# known-good image the master serves, its bootci-known-good EFI entry (a provisioning boot
# of the test image running bootci-efi, all machines at once) and its enrolment (name,
# token, master on its results partition). TEST_IMAGE: the test image folder.
# no_timer_check: on a loaded host TCG's timer can miss the kernel's IO-APIC check, which
# then panics at 0.06 s ("IO-APIC + timer doesn't work!"), seen with load 12 on 2 cores.
loop_machines_prepare() {
	local version=$1 name dir pids=() status=0 i
	local disk=$LOOP_WORK/known-good-$version.img
	curl -fsS -o "$disk" "$LOOP_MASTER/api/v1/known-good/$version/files/disk.img" ||
		{ echo "the master does not serve known-good $version's disk.img" >&2; return 1; }
	for name in "${LOOP_NAMES[@]}"; do
		dir=$(loop_dir "$name")
		"$LAB" disk "$dir" --disk-image "$disk" >/dev/null || return 1
		"$LAB" boot "$dir" --kernel "$TEST_IMAGE/vmlinuz" --initrd "$TEST_IMAGE/initrd.img" \
			--append "console=ttyS0 quiet panic=-1 no_timer_check bootci.run_id=provision bootci.on_finish=poweroff bootci.test=\"/usr/sbin/bootci-efi create-entry --label bootci-known-good --disk /dev/vda --partition 1 --loader /EFI/bootci/known-good.efi --last\"" \
			--no-reboot --timeout 300 >"$dir/provision.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || status=1
		name=${LOOP_NAMES[$i]}
		dir=$(loop_dir "$name")
		if ! grep -a 'bootci: test program exited with status 0' "$dir/console.log" >/dev/null; then
			echo "$name: the provisioning boot did not create the entry; its console:" >&2
			tail -n 20 "$dir/console.log" >&2
			status=1
		fi
		"$LAB" provision "$dir" --machine "$name" --token "$(cat "$LOOP_WORK/tokens/$name")" \
			--master "$LOOP_GUEST_MASTER" --deadline 2m >/dev/null || status=1
	done
	return $status
}

# loop_tftp: the fixed iPXE script in the lab's TFTP folder
loop_tftp() {
	# shellcheck disable=SC2016 # ${net0/mac} is iPXE's
	"$LAB" tftp "$LOOP_WORK/tftp" --chain "$LOOP_GUEST_MASTER/api/v1/boot/\${net0/mac}"
}

# loop_machine_on I: machine I on, netbooting loop_tftp's script with its MAC (LOOP_CONSOLE=ser2net:
# its ser2net started first, so that every boot's serial line is its TCP server). LOOP_POWER=ipmi:
# its BMC started (`lab bmc`, LAB_QEMU_EXTRA kept for every power on), then the master powers
# it on (`schedule power NAME on`, its ipmi driver); else the same command the master's power
# cycle runs.
loop_machine_on() {
	local i=$1 name=${LOOP_NAMES[$1]} dir
	dir=$(loop_dir "$name")
	if [ "${LOOP_CONSOLE:-none}" = ser2net ] &&
		! "$LAB" console "$dir" start --port "${LOOP_CONSOLE_PORTS[$i]}" \
			--serial-port "${LOOP_SERIAL_PORTS[$i]}" >>"$LOOP_WORK/console.log" 2>&1; then
		tail -n 5 "$LOOP_WORK/console.log" >&2
		return 1
	fi
	if [ "${LOOP_POWER:-command}" = ipmi ]; then
		# What the master did goes to LOOP_WORK/power.log (and to stderr when it failed).
		if ! { "$LAB" bmc "$dir" start --port "${LOOP_BMC_PORTS[$i]}" --tftp "$LOOP_WORK/tftp" \
			--mac "$(loop_mac "$i")" --timeout "${LOOP_POWER_TIMEOUT:-1800}" &&
			"$AGGREGATOR" schedule --data "$LOOP_DATA" power "$name" on; } \
			>>"$LOOP_WORK/power.log" 2>&1; then
			tail -n 5 "$LOOP_WORK/power.log" >&2
			return 1
		fi
	else
		"$LAB" power "$dir" on --tftp "$LOOP_WORK/tftp" --mac "$(loop_mac "$i")" \
			--timeout "${LOOP_POWER_TIMEOUT:-1800}" >/dev/null
	fi
}

# loop_power_on: the fixed iPXE script in the lab's TFTP folder, then every machine on
loop_power_on() {
	local i
	loop_tftp
	for i in "${!LOOP_NAMES[@]}"; do
		loop_machine_on "$i" || return 1
	done
}

# loop_jobs BUILD: the master's jobs of BUILD (machine run-id build tier shard state boots)
loop_jobs() {
	"$AGGREGATOR" schedule --data "$LOOP_DATA" jobs "$1"
}

# loop_image NAME WORDS: LOOP_WORK/NAME-image, the test image (TEST_IMAGE) with WORDS added
# to its kernel command line, and LOOP_WORK/NAME.manifest, the test image's manifest with the
# new boot.ipxe's digest and size (the master checks boot.ipxe against it)
loop_image() {
	local name=$1 words=$2 dir=$LOOP_WORK/$1-image sum size
	mkdir -p "$dir"
	ln -sf "$TEST_IMAGE/vmlinuz" "$TEST_IMAGE/initrd.img" "$dir/"
	sed "s|^kernel vmlinuz initrd=initrd.img .*|& $words|" "$TEST_IMAGE/boot.ipxe" >"$dir/boot.ipxe"
	grep -q -F -- "$words" "$dir/boot.ipxe" || return 1
	sum=$(sha256sum "$dir/boot.ipxe" | cut -d' ' -f1)
	size=$(stat -c %s "$dir/boot.ipxe")
	awk -v sum="$sum" -v size="$size" '$4 == "boot.ipxe" { $1 = sum; $2 = size } { print }' \
		"$BUILD/images/test.manifest" >"$LOOP_WORK/$name.manifest"
}

# loop_job_field BUILD FIELD: a field of the master's job of BUILD's fast tier (one machine):
# state, boots, or note (the rest of the line)
loop_job_field() {
	loop_jobs "$1" | awk -v f="$2" '$4 == "fast" { if (f == "state") print $6; else if (f == "boots") print $7; else { $1 = $2 = $3 = $4 = $5 = $6 = $7 = ""; sub(/^ +/, ""); print } }'
}

# loop_wait_tier BUILD TIER TIMEOUT: waits until every job of BUILD's TIER is done (its run
# uploaded and in the store), printing each change of a job's state; 1 when one is abandoned
# or the time is up.
loop_wait_tier() {
	local build=$1 tier=$2 until=$((SECONDS + $3)) now before="" pending
	while :; do
		now=$(loop_jobs "$build" | awk -v t="$tier" '$4 == t')
		if [ "$now" != "$before" ]; then
			diff <(printf '%s\n' "$before") <(printf '%s\n' "$now") | sed -n 's/^> /    job: /p'
			before=$now
		fi
		if printf '%s\n' "$now" | awk '$6 == "abandoned" { exit 1 }'; then :; else
			echo "a job of $build's $tier tier was abandoned" >&2
			return 1
		fi
		pending=$(printf '%s\n' "$now" | awk 'NF && $6 != "done"' | wc -l)
		[ -n "$now" ] && [ "$pending" = 0 ] && return 0
		if [ $SECONDS -ge "$until" ]; then
			echo "$build's $tier tier did not finish in time; the master's log ends:" >&2
			tail -n 15 "$LOOP_WORK/master.log" >&2
			return 1
		fi
		sleep 3
	done
}

# loop_wait_gate BUILD TIMEOUT: waits for the master's decision on BUILD's full tier and
# prints it (the scheduler's log line); 1 when none came in time
loop_wait_gate() {
	local build=$1 until=$((SECONDS + $2)) line
	while [ $SECONDS -lt "$until" ]; do
		line=$(grep -a -E "^schedule: $build: (full tier|fast tier found)" "$LOOP_WORK/master.log" | tail -n 1)
		if [ -n "$line" ]; then
			echo "${line#schedule: }"
			return 0
		fi
		sleep 2
	done
	echo "no decision on $build's full tier in time" >&2
	return 1
}

# loop_stop: every machine off (and its BMC and console server stopped), the master stopped
# (SIGTERM), whatever state they were in. A console server goes first, while its machine's
# QEMU still holds the serial end: ser2net whose keepopen connector has lost that end takes
# about 3 s to end on SIGTERM, at once otherwise.
loop_stop() {
	local name dir
	for name in "${LOOP_NAMES[@]}"; do
		dir=$(loop_dir "$name")
		[ -d "$dir" ] || continue
		[ ! -f "$dir/console.conf" ] || "$LAB" console "$dir" stop >/dev/null 2>&1
		if [ -d "$dir/bmc" ]; then
			"$LAB" bmc "$dir" stop >/dev/null 2>&1
		else
			"$LAB" power "$dir" off >/dev/null 2>&1
		fi
	done
	master_stop
}

# loop_leftovers: the processes of this loop still alive (QEMU on its disks, a BMC on its
# lan.conf, ser2net on its YAML, serve on its data folder); nothing printed when there are none
loop_leftovers() {
	# shellcheck disable=SC2009 # the arguments are what tell this loop's processes apart
	ps -eo pid=,args= | grep -F -e "$LOOP_WORK/machines/" -e "--data $LOOP_DATA" | grep -v -e grep -e 'ps -eo' || true
}
