#!/usr/bin/env bash
# The ipmi power driver against a real BMC: OpenIPMI's ipmi_sim on 127.0.0.1 (as `nobody` when
# this runs as root), driven by the real ipmitool through the master.
#   by hand     `schedule power m-ok status|on|off|cycle`: each action read back; the BMC's
#               "machine" (ipmi_sim's startcmd, a sleep) runs when on, is gone when off
#   recovery    serve with three silent machines: m-ok is power cycled; m-down's BMC does not
#               answer (nothing listens on its port) and m-badpw's refuses its password: both
#               are taken out at their first cycle, the reason in `schedule machines` and the log
#   return      m-badpw, its password repaired, is returned while its chassis is off: powered on;
#               m-down returned says its power failed
# Skipped when openipmi's ipmi_sim or ipmitool is not installed.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

ipmitool=/usr/bin/ipmitool
if ! command -v ipmi_sim >/dev/null 2>&1 || [ ! -x "$ipmitool" ]; then
	echo "1..0 # SKIP ipmi_sim (Debian package openipmi) or ipmitool not installed"
	exit 0
fi

# udp_free_port: a UDP port free on 127.0.0.1 right now (IPMI-over-LAN is UDP)
udp_free_port() {
	python3 -c 'import random, socket
for port in random.sample(range(20000, 30000), 200):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break'
}

bmc=$work/bmc
data=$work/data
mkdir -p "$bmc/state" "$data"
: >"$work/tokens"
chmod 0755 "$work"
bmc_port=$(udp_free_port)
down_port=$(udp_free_port)
while [ "$down_port" = "$bmc_port" ]; do down_port=$(udp_free_port); done
# ipmi_sim takes chassis power control only with a VM channel (a QEMU would connect to it: TCP).
vm_port=$(udp_free_port)
printf 'lab-secret\n' >"$work/bmc.pass"
printf 'not-the-password\n' >"$work/wrong.pass"
chmod 0600 "$work/bmc.pass" "$work/wrong.pass"

# The BMC's "machine": what ipmi_sim starts at power on and signals at power off.
cat >"$bmc/machine.sh" <<EOF
#!/bin/sh
echo \$\$ >"$bmc/machine.pid"
exec sleep 600
EOF
chmod 0755 "$bmc/machine.sh"
cat >"$bmc/lan.conf" <<EOF
name "power-ipmi"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $bmc_port
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  serial 15 127.0.0.1 $vm_port codec VM
  startcmd "$bmc/machine.sh"
  startnow false
  poweroff_wait 2
  kill_wait 3
  user 2 true "admin" "lab-secret" admin 10 none md2 md5 straight
EOF
cat >"$bmc/bmc.emu" <<EOF
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02
mc_enable 0x20
EOF

run_as=()
if [ "$(id -u)" = 0 ]; then
	run_as=(setpriv --reuid nobody --regid nogroup --clear-groups --)
	chown -R nobody:nogroup "$bmc"
fi
bmc_pid=
machine_stop() {
	local pid
	pid=$(cat "$bmc/machine.pid" 2>/dev/null) || return 0
	# Only the BMC's sleep: a pid reused by another program is left alone.
	grep -a "sleep" "/proc/$pid/cmdline" >/dev/null 2>&1 && kill -KILL "$pid" 2>/dev/null
	return 0
}
cleanup_bmc() {
	[ -z "$bmc_pid" ] || kill -TERM "$bmc_pid" 2>/dev/null
	machine_stop
	cleanup
}
trap cleanup_bmc EXIT
"${run_as[@]}" ipmi_sim -n -c "$bmc/lan.conf" -f "$bmc/bmc.emu" -s "$bmc/state" \
	>"$work/ipmi_sim.log" 2>&1 &
bmc_pid=$!

cat >"$data/machines.conf" <<CONF
[schedule]
power-cycles = 2
power-timeout = 20s
ipmitool = $ipmitool

[machine m-ok]
mac = 52:54:00:00:00:01
deadline = 3s
power = ipmi
ipmi-host = 127.0.0.1
ipmi-port = $bmc_port
ipmi-user = admin
ipmi-password-file = $work/bmc.pass

[machine m-down]
mac = 52:54:00:00:00:02
deadline = 3s
power = ipmi
ipmi-host = 127.0.0.1
ipmi-port = $down_port
ipmi-user = admin
ipmi-password-file = $work/bmc.pass

[machine m-badpw]
mac = 52:54:00:00:00:03
deadline = 3s
power = ipmi
ipmi-host = 127.0.0.1
ipmi-port = $bmc_port
ipmi-user = admin
ipmi-password-file = $work/wrong.pass
CONF

# power MACHINE ACTION: `schedule power`, its output in $out and $work/power.out
power() {
	out=$("$aggregator" schedule --data "$data" power "$@" 2>&1)
	local status=$?
	printf '%s\n' "$out" | tee -a "$work/power.out" | diag
	return $status
}
machine_runs() {
	local pid
	pid=$(cat "$bmc/machine.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null
}
bmc_answers() {
	"$ipmitool" -I lanplus -C 3 -H 127.0.0.1 -p "$bmc_port" -U admin -f "$work/bmc.pass" \
		chassis power status >/dev/null 2>&1
}

plan 12
if ! wait_until bmc_answers; then
	echo "Bail out! ipmi_sim does not answer on 127.0.0.1:$bmc_port:"
	diag <"$work/ipmi_sim.log"
	exit 1
fi

# By hand: each action read back from the BMC.
power m-ok status && [ "$out" = "schedule: m-ok: power is off" ]
check "status: the chassis is off" [ $? = 0 ]
power m-ok on && [[ $out == *"chassis power on (it was off); reads on" ]] && machine_runs
check "on: the BMC starts the machine, the state reads on" [ $? = 0 ]
first_pid=$(cat "$bmc/machine.pid")
power m-ok off && [[ $out == *"chassis power off (it was on); reads off" ]] && ! machine_runs
check "off: the BMC stops the machine, the state reads off" [ $? = 0 ]
power m-ok cycle && [[ $out == *"chassis power on (it was off); reads on" ]] && machine_runs
check "cycle of a chassis that is off: powered on" [ $? = 0 ]
power m-ok cycle && [[ $out == *"chassis power cycle (it was on); reads on" ]] && machine_runs &&
	[ "$(cat "$bmc/machine.pid")" != "$first_pid" ]
check "cycle of a chassis that is on: a new machine process" [ $? = 0 ]
power m-ok reset
[ $? = 1 ] && [[ $out == *"power reset: on, off, cycle or status" ]]
check "an action that is none: refused" [ $? = 0 ]

# Recovery: three silent machines.
export BOOTCI_SCHEDULE_TICK=1
start_server
# wait_log REGEX: a line of serve's log matches it within 90 s (a BMC that does not answer takes
# its calls' time, and serve's turns power the machines one after the other)
wait_log() {
	local i
	for ((i = 0; i < 900; i++)); do
		grep -a -E -- "$1" "$work/server.log" >/dev/null && return 0
		sleep 0.1
	done
	echo "no line of serve's log matches '$1'; it ends:" | diag
	tail -n 20 "$work/server.log" | diag
	return 1
}
check "m-ok silent: power cycled through its BMC, read back on" \
	wait_log "^schedule: m-ok: power cycle 1: BMC 127\.0\.0\.1:$bmc_port: chassis power cycle \(it was on\); reads on$"
check "m-badpw: its BMC refuses the password, taken out at once" \
	wait_log "^schedule: m-badpw: power cycle 1: BMC 127\.0\.0\.1:$bmc_port refuses user admin: .*RAKP.*: taken out of the schedule$"
check "m-down: its BMC does not answer, taken out" \
	wait_log "^schedule: m-down: power cycle 1: BMC 127\.0\.0\.1:$down_port does not answer \(2 calls of 2 tries, 2 s each\): taken out of the schedule$"
stop_server
"$aggregator" schedule --data "$data" machines >"$work/machines.out" 2>&1
diag <"$work/machines.out"
grep -E "^m-down +52:54:00:00:00:02 out +1 power cycle\(s\): power cycle 1: BMC 127\.0\.0\.1:$down_port does not answer" "$work/machines.out" >/dev/null &&
	grep -E "^m-badpw +52:54:00:00:00:03 out +1 power cycle\(s\): power cycle 1: BMC 127\.0\.0\.1:$bmc_port refuses user admin" "$work/machines.out" >/dev/null
check "schedule machines: both out, each with its reason in one line" [ $? = 0 ]

# Return: m-badpw repaired, its chassis off (as a machine taken out may leave it): powered on.
power m-ok off >/dev/null
cp "$work/bmc.pass" "$work/wrong.pass"
"$aggregator" schedule --data "$data" return m-badpw >"$work/return.out" 2>&1
status=$?
diag <"$work/return.out"
[ $status = 0 ] && grep -E "^schedule: m-badpw: powered back on: BMC 127\.0\.0\.1:$bmc_port: chassis power on \(it was off\); reads on$" "$work/return.out" >/dev/null &&
	machine_runs
check "return: back in the schedule and powered on, said so" [ $? = 0 ]
"$aggregator" schedule --data "$data" return m-down >"$work/return.out" 2>&1
status=$?
diag <"$work/return.out"
[ $status = 1 ] && grep -F "m-down is back in the schedule, but its power failed: BMC 127.0.0.1:$down_port does not answer" "$work/return.out" >/dev/null
check "return of a machine whose BMC does not answer: back in, the power failure said" [ $? = 0 ]
