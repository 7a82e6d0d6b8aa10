# shellcheck shell=bash
# Sourced by tests/aggregator/pages*.t: a data folder with two builds of
# drm-tip, runs on two machines generated in igt_runner's layout
# (report-runs.py) and ingested for real, one test output holding markup that
# must stay text, and a running `serve` on it (serve-lib.sh: 127.0.0.1,
# port 0).
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"
gen=$SRC/tests/aggregator/report-runs.py
data=$work/data

# The hostile output: a script element, and a </pre> closing the log's
# block followed by an image whose error handler would run.
evil='<script>document.title="pwned"</script></pre><img src=x onerror="document.title=1">'

pages_store() {
	local m i
	for i in 1 2; do
		"$aggregator" build add "drm-tip-$i" --tree drm-tip --commit "c0ffee$i" --tier fast \
			--registered "$((1764763200 + i * 600))" --data "$data" >>"$work/setup.log" 2>&1 || return 1
	done
	for m in lab-1 lab-2; do
		for i in 1 2; do
			gem=pass
			[ "$i" = 2 ] && [ "$m" = lab-2 ] && gem=fail
			"$gen" "$work/runs/$m-$i" kms_flip@basic=pass gem_exec@basic=$gem \
				kms_evil@markup=pass core_hotunplug@unplug=skip || return 1
			# The evil output after the result line: the status is unchanged.
			printf '%s\n' "$evil" >>"$work/runs/$m-$i/2/out.txt"
			"$aggregator" ingest --data "$data" --machine "$m" --build "drm-tip-$i" \
				"$work/runs/$m-$i" >>"$work/setup.log" 2>&1 || return 1
		done
	done
}

# pages_crash_run: a bootci run folder (build crash-1, machine lab-3) whose
# second job's boot died: boot 2 saved the pstore record of boot 1.
pages_crash_run() {
	local d=$work/runs/crash
	mkdir -p "$d/0" "$d/1" "$d/boot-0001" "$d/boot-0002/pstore"
	printf 'abort_mask : 0\ndmesg_warn_level : 4\n' >"$d/metadata.txt"
	printf 'igt_a basic\nigt_b crash\n' >"$d/joblist.txt"
	printf 'Linux lab 6.1.0-test #1 SMP x86_64 GNU/Linux\n' >"$d/uname.txt"
	printf '1700000000.000000\n' >"$d/starttime.txt"
	printf 'basic\nexit:0 (1.500s)\n' >"$d/0/journal.txt"
	printf 'IGT-Version: 1.28\nStarting subtest: basic\nSubtest basic: SUCCESS (1.500s)\n' >"$d/0/out.txt"
	: >"$d/0/err.txt"
	: >"$d/0/dmesg.txt"
	printf 'crash\n' >"$d/1/journal.txt"
	printf 'IGT-Version: 1.28\nStarting subtest: crash\n' >"$d/1/out.txt"
	: >"$d/1/err.txt"
	: >"$d/1/dmesg.txt"
	printf 'boot 1\nboot_id x\ntime 1700000000\nkernel 6.1.0-test\ncmdline console=ttyS0\nprevious none (first boot of the run)\npstore_records 0\nefi_dump_variables 0\n' \
		>"$d/boot-0001/boot.txt"
	printf 'boot 2\nboot_id y\ntime 1700000100\nkernel 6.1.0-test\ncmdline console=ttyS0\nprevious kernel crash (pstore: dmesg-efi_pstore-1)\npstore_records 1\n' \
		>"$d/boot-0002/boot.txt"
	printf 'Kernel panic - not syncing: <b>Fatal</b> exception\n' >"$d/boot-0002/pstore/dmesg-efi_pstore-1"
	printf 'run finished\n' >"$d/boot-0002/end.txt"
	"$aggregator" build add crash-1 --tree crash --commit c --tier fast --data "$data" >>"$work/setup.log" 2>&1 &&
		"$aggregator" ingest --data "$data" --machine lab-3 --run-id crash-run --build crash-1 "$d" >>"$work/setup.log" 2>&1
}
