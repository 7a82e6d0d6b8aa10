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
