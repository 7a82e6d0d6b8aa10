#!/usr/bin/env bash
# A deletion collect did not finish (issue 34, point 4): a run of the test image is uploaded by
# the known-good image's collect and kept on the partition (keep 1); the disk is then edited
# as an older collect's cut deletion left it: bootci-uploaded.txt and two job folders gone,
# the journal's done kept. At the next known-good boot collect archives it again (another
# digest), the master answers that it holds the run under another digest, and collect
# recognises the run by its files (every one of them is in the master's copy, byte for byte):
# marked uploaded with the master's digest and deleted (keep 0), not retried at every boot.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"

test_image=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
AGGREGATOR=$BUILD/host/bin/bootci-aggregator
machine_name=lab-half
token=half-token-$$-$RANDOM
run=half-1
# The known-good UKI's command line (images/known-good.conf).
known_good_cmdline="console=ttyS0 panic=10 bootci_image=known-good bootci.run_id=known-good"

# boot_known_good EXTRA_CMDLINE: the known-good image's own kernel, its collect against the master
boot_known_good() {
	local status=0
	"$LAB" boot "$machine" --kernel "$known_good/vmlinuz" --initrd "$known_good/initrd.img" \
		--append "$known_good_cmdline $1" --net --no-reboot --timeout "$BOOT_TIMEOUT" 2>&1 | diag ||
		status=${PIPESTATUS[0]}
	exited_by_itself "$status" "$machine"
}

# read_back NAME: the results partition as it is now, into MACHINE/NAME
read_back() {
	rm -rf "${machine:?}/$1"
	"$LAB" read "$machine" "$machine/$1" >/dev/null
}

# half_delete: on a copy of the results partition, what a deletion cut short leaves (the
# marker and job folders 0 and 1 removed, everything else kept), written back in place
half_delete() {
	local start size dir=runs/$run cmds=$machine/half.debugfs
	read -r start size < <(awk '$1 == "results" { print $2, $3 }' "$machine/layout")
	dd if="$machine/disk.img" of="$machine/results.img" bs=1M iflag=skip_bytes,count_bytes \
		skip="$start" count="$size" status=none || return 1
	{
		echo "rm $dir/bootci-uploaded.txt"
		for job in 0 1; do
			(cd "$machine/kept/$dir/$job" && find . -type f | sed "s|^\\.|rm $dir/$job|")
			echo "rmdir $dir/$job"
		done
	} >"$cmds"
	debugfs -w -f "$cmds" "$machine/results.img" >"$machine/half.log" 2>&1 || return 1
	dd if="$machine/results.img" of="$machine/disk.img" bs=1M oflag=seek_bytes seek="$start" \
		conv=notrunc,sparse status=none
}

plan 11
machine=$(fresh_machine half-deleted --disk-image "$known_good/disk.img")
check "machine disk is the builder's known-good disk.img" [ -n "$machine" ] || exit 1
master=$machine/master
port=$(master_free_port)
master_token_line "$machine_name" "$token" >"$machine/tokens"
trap 'master_stop' EXIT

# ---- the run: five short jobs of the fixtures
status=0
"$LAB" boot "$machine" --kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 panic=-1 bootci.run_id=$run bootci.on_finish=poweroff bootci.test_dir=/usr/libexec/bootci/fixtures bootci.testlist=/etc/bootci/testlists/demo.txt bootci.include=igt@igt_basic@ bootci.per_test_timeout=60" \
	--timeout "$BOOT_TIMEOUT" 2>&1 | diag || status=${PIPESTATUS[0]}
check "the run ran and powered off" exited_by_itself "$status" "$machine"
"$LAB" provision "$machine" --machine "$machine_name" --token "$token" \
	--master "http://10.0.2.2:$port" --deadline 2m 2>&1 | diag

# ---- uploaded, kept on the partition
check "master started on 127.0.0.1:$port" master_start "$master" "$port" "$machine/tokens" "$machine/master.log"
check "the known-good boot uploaded the run and kept it (keep 1)" \
	eval 'boot_known_good bootci_collect.keep=1 && console_has "$machine" "collect: run $run uploaded: [0-9]+ bytes, sha256 [0-9a-f]{64}"'
digest=$(last_console "$machine" | sed -n "s/.*collect: run $run uploaded: [0-9]* bytes, sha256 \\([0-9a-f]\\{64\\}\\).*/\\1/p" | tail -n 1)
read_back kept
check "the run is on the partition, marked uploaded, with its job folders 0 and 1" \
	eval "grep -q '^sha256 $digest' '$machine/kept/runs/$run/bootci-uploaded.txt' && [ -d '$machine/kept/runs/$run/0' ] && [ -d '$machine/kept/runs/$run/1' ]"

# ---- the deletion cut short, then the next known-good boot
check "the disk edited: bootci-uploaded.txt and job folders 0 and 1 gone, the journal kept" \
	eval 'half_delete && read_back half && [ ! -e "$machine/half/runs/$run/bootci-uploaded.txt" ] && [ ! -e "$machine/half/runs/$run/0" ] && [ ! -e "$machine/half/runs/$run/1" ] && grep -qx done "$machine/half/runs/$run/bootci-journal.txt"'
check "the next known-good boot ended by itself" boot_known_good ""
check "collect recognised the run as the master's (its digest) and marked it uploaded" \
	console_has "$machine" "collect: run $run: the master holds it already \\(sha256 $digest\\): .* marked uploaded"
check "collect did not leave it for the next boot" \
	console_has "$machine" "collect: 1 run uploaded, 0 left for the next boot, older uploaded runs deleted"
read_back after
check "the run is deleted from the partition (keep 0), outgoing/ is empty" \
	eval "[ ! -e '$machine/after/runs/$run' ] && [ -z \"\$(ls -A '$machine/after/outgoing' 2>/dev/null)\" ] && [ -z \"\$(ls -A '$machine/after/runs' | grep -v '^known-good\$')\" ]"
master_stop
check "the master holds the run once, under its first digest, one archive" \
	eval "grep -q '\"sha256\": \"$digest\"' '$master/runs/$machine_name/$run.json' && [ \"\$(find '$master/archives' -type f | wc -l)\" = 1 ]"
