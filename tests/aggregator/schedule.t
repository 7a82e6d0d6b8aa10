#!/usr/bin/env bash
# The scheduler through a real `serve` on 127.0.0.1: a build published on the
# master (verified against the builder's manifest), the iPXE answers a
# machine's firmware gets (its job, a shard, nothing queued, an unknown MAC),
# the job initrd and the build's files fetched as iPXE would, and the
# machines' states.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

data=$work/data
image=$work/image
mkdir -p "$data" "$image"
: >"$work/tokens"
cat >"$data/machines.conf" <<CONF
[machine solo]
mac = 52:54:00:00:00:01
[machine grp-a]
mac = 52:54:00:00:00:02
shard-group = g
[machine grp-b]
mac = 52:54:00:00:00:03
shard-group = g
[tree t]
full = always
CONF

# A test image as bootci-builder writes it (files and --manifest lines).
head -c 4096 /dev/urandom >"$image/vmlinuz"
head -c 8192 /dev/urandom >"$image/initrd.img"
printf '#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0\ninitrd initrd.img\nboot\n' >"$image/boot.ipxe"
printf 'igt@core@a\nigt@core@b\n' >"$image/fast.testlist"
printf 'igt@t@1\nigt@t@2\nigt@t@3\nigt@t@4\n' >"$image/full.testlist"
manifest_line() { printf '%s %s 100644 %s bootci-builder\n' "$(sha256sum <"$image/$1" | cut -d' ' -f1)" "$(stat -c %s "$image/$1")" "$1"; }
{
	echo "# bootci-builder manifest: SHA256 SIZE MODE PATH ORIGIN"
	manifest_line boot.ipxe
	manifest_line initrd.img
	manifest_line vmlinuz
	echo "- 0 040755 initrd.img:/etc bootci-builder"
} >"$image/manifest"

publish() { "$aggregator" publish --data "$data" --tree t --commit abc --tier fast "$@" >>"$work/publish.log" 2>&1; }

# A file that differs from the manifest is refused, nothing registered.
cp -r "$image" "$work/bad"
printf 'x' >>"$work/bad/initrd.img"
if ! publish --build bad "$work/bad" && grep -q "initrd.img: sha256 .* the manifest says" "$work/publish.log" &&
	! "$aggregator" publish --data "$data" --tree t --commit abc --tier fast --build bad "$work/nowhere" 2>/dev/null; then
	ok "publish refuses a file whose digest is not the manifest's"
else
	not_ok "publish of a damaged image"
	diag <"$work/publish.log"
fi
if publish --build b1 "$image" && grep -q "b1: fast tier queued, 3 job(s)" "$work/publish.log"; then
	ok "publish verifies, keeps and registers the build and queues its fast tier"
else
	not_ok "publish b1"
	diag <"$work/publish.log"
fi

# The known-good disk image, published the same way with a version.
kg=$work/known-good
mkdir -p "$kg"
head -c 16384 /dev/urandom >"$kg/disk.img"
printf 'layout\n' >"$kg/layout"
{
	printf '%s %s 100644 disk.img bootci-builder\n' "$(sha256sum <"$kg/disk.img" | cut -d' ' -f1)" "$(stat -c %s "$kg/disk.img")"
	printf '%s %s 100644 layout bootci-builder\n' "$(sha256sum <"$kg/layout" | cut -d' ' -f1)" "$(stat -c %s "$kg/layout")"
} >"$kg/manifest"
cp -r "$kg" "$work/kg-bad"
printf 'x' >>"$work/kg-bad/disk.img"
if "$aggregator" publish --data "$data" --known-good 2026.12.1 "$kg" >>"$work/publish.log" 2>&1 &&
	! "$aggregator" publish --data "$data" --known-good 2026.12.2 "$work/kg-bad" >>"$work/publish.log" 2>&1 &&
	grep -q "disk.img: sha256 .* the manifest says" "$work/publish.log"; then
	ok "the known-good image is published with a version, verified against its manifest"
else
	not_ok "publish --known-good"
	diag <"$work/publish.log"
fi

BOOTCI_SCHEDULE_TICK=1 start_server
if curl -sf "$base/api/v1/known-good/2026.12.1/files/disk.img" | cmp -s - "$kg/disk.img" &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v1/known-good/2026.12.2/files/disk.img")" = 404 ]; then
	ok "the known-good image's files are served by version; a refused version has none"
else
	not_ok "known-good files"
fi
boot() { curl -sf "$base/api/v1/boot/$1"; }

script=$(boot 52:54:00:00:00:01)
expected="#!ipxe
# bootci: solo runs b1-fast (build b1, fast tier)
kernel $base/api/v1/builds/b1/files/vmlinuz initrd=job.img initrd=initrd.img console=ttyS0 bootci.run_id=b1-fast bootci.testlist=/etc/bootci/job.testlist
initrd --name job.img $base/api/v1/machines/solo/jobs/b1-fast/initrd
initrd --name initrd.img $base/api/v1/builds/b1/files/initrd.img
boot"
if [ "$script" = "$expected" ]; then
	ok "a machine's boot request gets its job as an iPXE script"
else
	not_ok "boot script for solo"
	diag <<<"$script"
fi

# What iPXE then fetches: the build's files as published, the job initrd with the testlist.
curl -sf "$base/api/v1/builds/b1/files/vmlinuz" -o "$work/got-vmlinuz"
curl -sf "$base/api/v1/machines/solo/jobs/b1-fast/initrd" -o "$work/job.img"
mkdir -p "$work/unpacked"
if cmp -s "$work/got-vmlinuz" "$image/vmlinuz" &&
	(cd "$work/unpacked" && cpio -i --quiet -d <"$work/job.img") &&
	cmp -s "$work/unpacked/etc/bootci/job.testlist" "$image/fast.testlist"; then
	ok "the kernel is served as published; the job initrd unpacks to the job's testlist"
else
	not_ok "build files or job initrd"
fi
status=$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v1/builds/b1/files/nothing")
if [ "$status" = 404 ]; then ok "a file the build does not have is 404"; else not_ok "missing file: $status"; fi

# The tree runs its full tier always: the loop queues it, split across the group.
for _ in $(seq 50); do
	grep -q "b1: full tier queued" "$work/server.log" && break
	sleep 0.1
done
boot 52:54:00:00:00:02 >/dev/null # grp-a's fast job first
script=$(boot 52:54:00:00:00:03)
if grep -q "^# bootci: grp-b runs b1-fast " <<<"$script"; then
	# grp-b's run was uploaded: with the run in the store, its next boot gets its shard.
	"$aggregator" ingest --data "$data" --machine grp-b --run-id b1-fast \
		"$SRC/tests/resultgen/scenarios/piglit-style-default-level" >>"$work/ingest.log" 2>&1
	script=$(boot 52:54:00:00:00:03)
fi
if grep -q "^# bootci: grp-b runs b1-full-2of2 (build b1, full tier, shard 2 of 2)$" <<<"$script" &&
	curl -sf "$base/api/v1/machines/grp-b/jobs/b1-full-2of2/initrd" | (cd "$work/unpacked" && cpio -i --quiet -d -u) &&
	[ "$(cat "$work/unpacked/etc/bootci/job.testlist")" = "$(printf 'igt@t@2\nigt@t@4')" ]; then
	ok "a shard group member gets its shard of the full testlist"
else
	not_ok "shard for grp-b"
	diag <<<"$script"
	diag <"$work/ingest.log"
fi

# Uploaded, nothing else queued: exit, the disk's known-good image boots.
"$aggregator" ingest --data "$data" --machine solo --run-id b1-fast \
	"$SRC/tests/resultgen/scenarios/piglit-style-default-level" >>"$work/ingest.log" 2>&1
"$aggregator" ingest --data "$data" --machine solo --run-id b1-full \
	"$SRC/tests/resultgen/scenarios/piglit-style-default-level" >>"$work/ingest.log" 2>&1
script=$(boot 52:54:00:00:00:01)
if [ "$(printf '%s\n' "$script" | head -1)" = "#!ipxe" ] && [ "$(printf '%s\n' "$script" | tail -1)" = exit ]; then
	ok "nothing queued: the answer is exit"
else
	not_ok "nothing queued"
	diag <<<"$script"
fi
script=$(boot 52-54-00-99-99-99)
if [ "$(printf '%s\n' "$script" | tail -1)" = exit ] && grep -q "unknown MAC 52-54-00-99-99-99" "$work/server.log"; then
	ok "an unknown MAC gets exit, and the log says so"
else
	not_ok "unknown MAC"
fi
states=$(curl -sf "$base/api/v1/schedule/machines")
if python3 -c 'import json,sys; m={x["name"]: x for x in json.load(sys.stdin)["machines"]}; assert m["solo"]["state"] == "ready" and m["grp-b"]["power_cycles"] == 0' <<<"$states"; then
	ok "the machines' states are served as JSON"
else
	not_ok "machine states"
	diag <<<"$states"
fi
# Publishing over HTTP: a publisher's token (DATA/publishers), never a machine's.
add_machine solo token-of-solo
printf 'ci-release sha256:%s\n' "$(printf %s publisher-secret | sha256sum | cut -d' ' -f1)" >"$data/publishers"
printf 'token-of-solo\n' >"$work/machine-token"
printf 'publisher-secret\n' >"$work/publisher-token"
remote() { "$aggregator" publish --master "$base" --tree t --commit def --tier fast "$@" >>"$work/remote.log" 2>&1; }
if ! remote --token-file "$work/machine-token" --build b2 "$image" &&
	grep -q "401 .*not a publisher's token" "$work/remote.log" && [ ! -e "$data/builds/staging/b2" ]; then
	ok "a machine's token cannot publish"
else
	not_ok "publish with a machine token"
	diag <"$work/remote.log"
fi
status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer publisher-secret" \
	-H "X-Bootci-Sha256: $(printf %064d 0)" --data-binary @"$image/vmlinuz" "$base/api/v1/builds/b3/files/vmlinuz")
if [ "$status" = 400 ] && [ ! -e "$data/builds/staging/b3/vmlinuz" ]; then
	ok "a build file whose digest is not the announced one is refused and not kept"
else
	not_ok "PUT with a wrong digest: $status"
fi
if remote --token-file "$work/publisher-token" --build b2 --base b1 "$image" &&
	wait_until grep -q "PUT /api/v1/builds/b2 201 .*build b2 published" "$work/server.log" &&
	curl -sf "$base/api/v1/builds/b2/files/initrd.img" | cmp -s - "$image/initrd.img" &&
	[ ! -e "$data/builds/staging/b2" ] && boot 52:54:00:00:00:01 | grep -q "bootci.run_id=b2-fast "; then
	ok "publish --master sends a build: verified, registered, served, queued"
else
	not_ok "publish --master"
	diag <"$work/remote.log"
fi
# The known-good image over HTTP, the same way: files, then the version's PUT.
kgremote() { "$aggregator" publish --master "$base" --known-good "$@" >>"$work/remote.log" 2>&1; }
if kgremote 2026.12.3 --token-file "$work/publisher-token" "$kg" &&
	wait_until grep -q "PUT /api/v1/known-good/2026.12.3 201 .*known-good image 2026.12.3 published" "$work/server.log" &&
	curl -sf "$base/api/v1/known-good/2026.12.3/files/disk.img" | cmp -s - "$kg/disk.img" &&
	[ ! -e "$data/known-good/staging/2026.12.3" ]; then
	ok "publish --known-good --master sends the image: verified, registered, served by version"
else
	not_ok "publish --known-good --master"
	diag <"$work/remote.log"
fi
if ! kgremote 2026.12.4 --token-file "$work/publisher-token" "$work/kg-bad" &&
	grep -q "422 .*disk.img: sha256 .* the manifest says" "$work/remote.log" &&
	! kgremote 2026.12.5 --token-file "$work/machine-token" "$kg" &&
	grep -q "401 .*not a publisher's token" "$work/remote.log" &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v1/known-good/2026.12.4/files/disk.img")" = 404 ]; then
	ok "a known-good image that does not match its manifest, or sent with a machine's token, is refused"
else
	not_ok "bad known-good publishes"
	diag <"$work/remote.log"
fi
# The operator's view and the bring-back command, on the store serve uses, while it runs.
"$aggregator" schedule --data "$data" machines >"$work/machines.out" 2>&1
"$aggregator" schedule --data "$data" jobs b2 >"$work/jobs.out" 2>&1
if grep -Eq '^solo +52:54:00:00:00:01 +ready 0 power cycle' "$work/machines.out" &&
	grep -Eq '^solo +b2-fast +b2 +fast 1/1 booted +1$' "$work/jobs.out"; then
	ok "schedule machines and schedule jobs show the lab from the store"
else
	not_ok "schedule machines / jobs"
	diag <"$work/machines.out"
	diag <"$work/jobs.out"
fi
# Taken out as the loop does after its power cycles (tests/unit/test_schedule.c runs that part).
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
c.execute("UPDATE schedule_machines SET state = \x27out\x27, note = \x27taken out by the test\x27"
          " WHERE machine = (SELECT id FROM machines WHERE name = \x27solo\x27)")
c.commit()' "$data/bootci.sqlite" 2>"$work/sql.err"
out=$(boot 52:54:00:00:00:01)
"$aggregator" schedule --data "$data" return solo >"$work/return.out" 2>&1
"$aggregator" schedule --data "$data" return nobody >>"$work/return.out" 2>&1 && status=0 || status=$?
if grep -q "out of the schedule" <<<"$out" &&
	grep -q "solo: back in the schedule (it was out: taken out by the test)" "$work/return.out" &&
	grep -q "no machine nobody in the inventory" "$work/return.out" && [ "$status" = 1 ] &&
	boot 52:54:00:00:00:01 | grep -q "bootci.run_id=b2-fast "; then
	ok "schedule return puts a machine taken out back: it gets its job at its next boot"
else
	not_ok "schedule return"
	diag <<<"$out"
	diag <"$work/return.out" "$work/sql.err"
fi
"$aggregator" schedule --data "$data" retrun solo >"$work/verb.out" 2>&1 && status=0 || status=$?
if [ "$status" != 0 ] && grep -q "schedule: 'retrun': expected machines, jobs \[BUILD\], confirm BUILD, return MACHINE, redeploy MACHINE or power MACHINE ACTION" "$work/verb.out"; then
	ok "schedule with an unknown verb fails naming it"
else
	not_ok "schedule retrun: exit $status"
	diag <"$work/verb.out"
fi
stop_server
if [ "$server_status" = 0 ]; then ok "serve stops cleanly with the scheduler's loop"; else not_ok "serve exit $server_status"; fi
done_testing
