#!/usr/bin/env bash
# The master killed (SIGKILL) in the middle of an upload and started again: collect asks
# what the master holds, resumes from there, and the run ends up stored once, every file
# byte for byte, nothing lost or doubled. The known-good image's own kernel and initramfs
# are booted directly (the hand-over by BootNext is upload.t's and handover.t's); the run
# is a test program's 64 MiB of random output, so the upload lasts long enough to be cut.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"

test_image=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
AGGREGATOR=$BUILD/host/bin/bootci-aggregator
machine_name=lab-kill
token=kill-token-$$-$RANDOM
run=big
# The known-good UKI's command line (images/known-good.conf).
known_good_cmdline="console=ttyS0 panic=10 bootci_image=known-good bootci.run_id=known-good"
cut_at=$((4 * 1024 * 1024))

plan 12
machine=$(fresh_machine upload-kill --disk-image "$known_good/disk.img")
check "machine disk is the builder's known-good disk.img" [ -n "$machine" ] || exit 1
master=$machine/master
port=$(master_free_port)
master_token_line "$machine_name" "$token" >"$machine/tokens"
trap 'master_stop' EXIT

# ---- the run: 64 MiB that do not compress
status=0
"$LAB" boot "$machine" --kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 quiet panic=-1 bootci.run_id=$run bootci.on_finish=poweroff bootci.test=\"/bin/busybox dd if=/dev/urandom bs=1048576 count=64\"" \
	--timeout "$BOOT_TIMEOUT" 2>&1 | diag || status=${PIPESTATUS[0]}
check "the run wrote its 64 MiB and powered off" exited_by_itself "$status" "$machine"
rm -rf "$machine/before"
"$LAB" read "$machine" "$machine/before" >/dev/null
check "the run's output is on the partition" [ "$(stat -c %s "$machine/before/runs/$run/test/out.txt" 2>/dev/null)" = 67108864 ]
tree_digests "$machine/before/runs/$run" >"$machine/disk.sha256"
"$LAB" provision "$machine" --machine "$machine_name" --token "$token" \
	--master "http://10.0.2.2:$port" --deadline 5m 2>&1 | diag

# ---- the upload, cut by a SIGKILL of the master once it holds $cut_at bytes
check "master started on 127.0.0.1:$port" master_start "$master" "$port" "$machine/tokens" "$machine/master.log"
part=$master/incoming/$machine_name/$run.part
"$LAB" boot "$machine" --kernel "$known_good/vmlinuz" --initrd "$known_good/initrd.img" \
	--append "$known_good_cmdline" --net --no-reboot --timeout "$BOOT_TIMEOUT" >"$machine/known-good.log" 2>&1 &
lab_pid=$!
killed=0
while kill -0 "$lab_pid" 2>/dev/null; do
	size=$(stat -c %s "$part" 2>/dev/null || echo 0)
	if [ "$size" -ge "$cut_at" ]; then
		master_kill
		echo "master SIGKILLed with $size bytes of the upload received" | diag
		killed=1
		sleep 2
		master_start "$master" "$port" "$machine/tokens" "$machine/master.log" || break
		break
	fi
	sleep 0.05
done
status=0
wait "$lab_pid" || status=$?
diag <"$machine/known-good.log"
check "the master was killed in the middle of the upload" [ "$killed" = 1 ]
check "the known-good boot ended by itself" exited_by_itself "$status" "$machine"
check "collect resumed from what the master had confirmed" \
	console_has "$machine" 'collect: resuming: the master has [1-9][0-9]* of [0-9]+ bytes'
check "the run was uploaded" console_has "$machine" "collect: run $run uploaded: [0-9]+ bytes, sha256 [0-9a-f]{64}"
digest=$(last_console "$machine" | sed -n "s/.*collect: run $run uploaded: [0-9]* bytes, sha256 \\([0-9a-f]\\{64\\}\\).*/\\1/p" | tail -n 1)
state=$(master_run_state "$port" "$machine_name" "$token" "$run")
echo "master: $state" | diag
check "the master holds it as stored with the digest collect sent" \
	eval "python3 -c 'import json, sys; s = json.loads(sys.argv[1]); sys.exit(not (s[\"state\"] == \"stored\" and s[\"sha256\"] == sys.argv[2]))' '$state' '$digest'"
master_stop

# Nothing doubled: one archive, one stored run, no upload left half-way.
check "one archive kept, nothing left in incoming/" \
	eval "[ \"\$(find '$master/archives' -type f | wc -l)\" = 1 ] && [ -z \"\$(find '$master/incoming' -type f 2>/dev/null)\" ]"
# A bootci test program run has no igt_runner files: serve keeps it and records it, and its
# store ingests only results directories (the record says ingested false).
check "the master recorded the run once, with that digest" python3 - \
	"$master/runs/$machine_name/$run.json" "$digest" "$run" <<'PY'
import json, sys
record = json.load(open(sys.argv[1]))
sys.exit(record["sha256"] != sys.argv[2] or record["run_id"] != sys.argv[3])
PY
# Nothing lost: every file of the master's archive against the disk's.
rm -rf "$machine/unpacked" && mkdir -p "$machine/unpacked"
tar --zstd -xf "$master/archives/$digest.tar.zst" -C "$machine/unpacked" 2>&1 | diag
rm -f "$machine/unpacked/manifest.json"
tree_digests "$machine/unpacked" >"$machine/master.sha256"
check "every file's sha256 on the master equals the disk's" diff -u "$machine/disk.sha256" "$machine/master.sha256"
