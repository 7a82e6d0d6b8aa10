#!/usr/bin/env bash
# Every byte home: a run of the test image hands over to the known-good image, whose
# collect uploads it to a master (`bootci-aggregator serve` on the host's loopback, 10.0.2.2
# for the guest) on a machine whose disk is the builder's known-good disk image:
#   1. provisioning: the bootci-known-good EFI entry (bootci-efi), and the machine's
#      identity, token and master written onto its results partition (lab provision);
#   2. a netbooted run of the test image ends with the hand-over (BootNext);
#   3. the known-good image boots with the master down: the run and its archive stay on
#      the partition, nothing is marked uploaded;
#   4. the next job (a short test program run) hands over again, and that known-good boot
#      finds the master up: both runs are uploaded (the first from the archive kept on the
#      disk), the master holds them with the same digests, and the partition is clean;
#      every file's sha256 in the master's archive equals the file read back from the disk
#      before the upload.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"

test_image=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
AGGREGATOR=$BUILD/host/bin/bootci-aggregator
label=bootci-known-good
machine_name=lab-upload
token=upload-token-$$-$RANDOM
run=upload-1

boot_step() {
	local name=$1 status=0 started=$SECONDS
	shift
	"$LAB" "$@" --timeout "$BOOT_TIMEOUT" 2>&1 | diag || status=${PIPESTATUS[0]}
	echo "$name: $((SECONDS - started)) s wall" | diag
	exited_by_itself "$status" "$machine"
}

# read_back NAME: the results partition as it is now, into MACHINE/NAME
read_back() {
	rm -rf "${machine:?}/$1"
	"$LAB" read "$machine" "$machine/$1" >/dev/null
}

plan 24
machine=$(fresh_machine upload --disk-image "$known_good/disk.img")
check "machine disk is the builder's known-good disk.img" [ -n "$machine" ] || exit 1
master=$machine/master
port=$(master_free_port)
master_token_line "$machine_name" "$token" >"$machine/tokens"
trap 'master_stop' EXIT

# ---- 1. provisioning
provision="/usr/sbin/bootci-efi create-entry --label $label --disk /dev/vda --partition 1"
provision="$provision --loader /EFI/bootci/known-good.efi --last"
check "provisioning boot made the known-good entry" boot_step provisioning boot "$machine" \
	--kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 panic=-1 bootci.run_id=provision bootci.on_finish=poweroff bootci.test=\"$provision\""
check "machine enrolled: identity, token and master on its disk" \
	"$LAB" provision "$machine" --machine "$machine_name" --token "$token" \
	--master "http://10.0.2.2:$port" --deadline 8

# ---- 2. the run, handed over
"$LAB" tftp "$machine/tftp" --kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 panic=-1 bootci.run_id=$run bootci.test_dir=/usr/libexec/bootci/fixtures bootci.testlist=/etc/bootci/testlists/demo.txt bootci.per_test_timeout=60" >/dev/null
check "netbooted run ended with the hand-over" boot_step run netboot "$machine" --tftp "$machine/tftp" --no-reboot
check "the run handed over by BootNext" console_has "$machine" "bootci: hand-over: BootNext=Boot[0-9A-F]{4} \\($label\\)"

# ---- 3. the known-good image, the master down
check "known-good boot with the master down ended by itself" \
	boot_step known-good-down netboot "$machine" --tftp "$machine/tftp" --no-reboot
check "the known-good image got an address by DHCP" console_has "$machine" 'bootci-collect: eth0: 10\.0\.2\.15/'
check "collect could not reach the master and kept the run" \
	console_has "$machine" "collect: run $run (not uploaded: .*it stays on the partition|stays on the partition \\(the master is out of reach\\))"
read_back down
check "the run is still on the partition, not marked uploaded" \
	eval "[ -f '$machine/down/runs/$run/bootci-journal.txt' ] && [ ! -e '$machine/down/runs/$run/bootci-uploaded.txt' ]"
check "its archive waits in outgoing/ with its digest" \
	eval "[ -s '$machine/down/outgoing/$run.tar.zst' ] && [ -s '$machine/down/outgoing/$run.sha256' ]"
tree_digests "$machine/down/runs/$run" >"$machine/disk.sha256"

# ---- 4. the next job hands over; this known-good boot finds the master up
check "master started on 127.0.0.1:$port" master_start "$master" "$port" "$machine/tokens" "$machine/master.log"
"$LAB" tftp "$machine/tftp" --kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 panic=-1 bootci.run_id=upload-2 bootci.test=\"/usr/libexec/bootci/fixtures/exit-with 0\"" >/dev/null
check "the next job ran and handed over" boot_step run-2 netboot "$machine" --tftp "$machine/tftp" --no-reboot
check "known-good boot with the master up ended by itself" \
	boot_step known-good-up netboot "$machine" --tftp "$machine/tftp" --no-reboot
check "the known-good UKI booted from the disk" console_has "$machine" 'Command line: .*bootci_image=known-good'
check "collect resumed from the archive it kept" \
	console_has "$machine" "collect: run $run: archive kept from an earlier boot"
check "the second run went up too" console_has "$machine" 'collect: run upload-2 uploaded: '
check "collect printed its progress" console_has "$machine" 'collect: upload .* / .* \(100%\), .*/s, ETA'
check "the master confirmed the archive" console_has "$machine" "collect: run $run uploaded: [0-9]+ bytes, sha256 [0-9a-f]{64}"
digest=$(last_console "$machine" | sed -n "s/.*collect: run $run uploaded: [0-9]* bytes, sha256 \\([0-9a-f]\\{64\\}\\).*/\\1/p" | tail -n 1)
state=$(master_run_state "$port" "$machine_name" "$token" "$run")
echo "master: $state" | diag
check "the master holds the run as stored with that digest" \
	eval "python3 -c 'import json, sys; s = json.loads(sys.argv[1]); sys.exit(not (s[\"state\"] == \"stored\" and s[\"sha256\"] == sys.argv[2]))' '$state' '$digest'"
master_stop
check "the master's store has the run, its results and boots" python3 - "$master/bootci.sqlite" "$machine_name" "$run" "$digest" <<'PY'
import sqlite3, sys
db, machine, run, digest = sys.argv[1:]
c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
rows = c.execute("SELECT r.id, r.digest FROM runs r JOIN machines m ON m.id = r.machine"
                 " WHERE m.name = ? AND r.run_id = ?", (machine, run)).fetchall()
if len(rows) != 1 or rows[0][1] != digest:
    sys.exit("store: %r" % rows)
results = c.execute("SELECT count(*) FROM results WHERE run = ?", (rows[0][0],)).fetchone()[0]
boots = c.execute("SELECT count(*) FROM boots WHERE run = ?", (rows[0][0],)).fetchone()[0]
print("# store: %d results, %d boots" % (results, boots))
sys.exit(results == 0 or boots == 0)
PY
read_back up
check "the partition is clean: both runs deleted (keep 0), outgoing empty" \
	eval "[ ! -e '$machine/up/runs/$run' ] && [ ! -e '$machine/up/runs/upload-2' ] && [ -z \"\$(ls -A '$machine/up/outgoing' 2>/dev/null)\" ]"

# End to end: the master's archive, unpacked, against the files read back before the upload.
archive=$(find "$master" -name "$digest.tar.zst" -print -quit 2>/dev/null)
rm -rf "$machine/unpacked" && mkdir -p "$machine/unpacked"
check "the master kept the archive under its digest" \
	eval "[ -n '$archive' ] && [ \"\$(sha256sum <'$archive' | cut -d' ' -f1)\" = '$digest' ]"
[ -z "$archive" ] || tar --zstd -xf "$archive" -C "$machine/unpacked" 2>&1 | diag
rm -f "$machine/unpacked/manifest.json"
tree_digests "$machine/unpacked" >"$machine/master.sha256"
check "every file's sha256 on the master equals the disk's ($(wc -l <"$machine/disk.sha256") files)" \
	diff -u "$machine/disk.sha256" "$machine/master.sha256"
check "the manifest lists the same files and digests" eval "[ -n '$archive' ] && tar --zstd -xOf '$archive' manifest.json | python3 -c '
import json, sys
m = json.load(sys.stdin)
got = sorted((f[\"sha256\"], f[\"path\"]) for f in m[\"files\"])
want = sorted(tuple(l.split(None, 1)) for l in open(sys.argv[1]).read().splitlines())
sys.exit(got != want or m[\"run_id\"] != sys.argv[2] or m[\"machine\"] != sys.argv[3])' '$machine/disk.sha256' '$run' '$machine_name'"
