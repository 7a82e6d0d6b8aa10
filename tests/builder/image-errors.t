#!/usr/bin/env bash
# bootci-builder test-image / known-good on bad input: a missing kernel,
# modules folder or IGT prefix, an unknown module, an unresolved library, a bad
# recipe line. Each exits non-zero with a message naming the culprit, leaves
# the previous output folder as it was, and no temporary and no manifest behind.
set -uo pipefail
# shellcheck source=tests/builder/kernel-setup.sh
. "$SRC/tests/builder/kernel-setup.sh"
vmlinuz=$BUILD/kernel/vmlinuz
export SOURCE_DATE_EPOCH=1700000000 EXECUTOR=$BUILD/musl/bin/bootci-executor

printf 'file /init ${EXECUTOR} 0755 0 0\n' >"$work/small.spec"
good_recipe() { printf 'image = test\nspec = small.spec\nmodules = ext4\nuki = no\n%s\n' "${1:-}" >"$work/r.conf"; }

# fails NAME WHAT ARGS...: the build must fail saying WHAT and change nothing
fails() {
	local name=$1 what=$2 status
	shift 2
	rm -rf "$work/out" "$work/out.tmp."* "$work/m"
	mkdir "$work/out" && echo previous >"$work/out/marker"
	"$builder" "$@" --out "$work/out" --manifest "$work/m" >"$work/stdout" 2>"$work/stderr"
	status=$?
	if [ "$status" = 0 ]; then
		not_ok "$name: accepted"
	elif ! grep -qF -- "$what" "$work/stderr"; then
		not_ok "$name: message '$(cat "$work/stderr")' lacks '$what'"
	elif [ "$(ls -A "$work/out")" != marker ] || [ "$(cat "$work/out/marker")" != previous ]; then
		not_ok "$name: the previous output changed: $(ls -A "$work/out" | tr '\n' ' ')"
	elif compgen -G "$work/out.tmp.*" >/dev/null || [ -e "$work/m" ]; then
		not_ok "$name: left $(ls -d "$work"/out.tmp.* "$work/m" 2>/dev/null | tr '\n' ' ')"
	else
		ok "$name: exit $status, '$what' named, nothing changed"
	fi
}

good_recipe
fails "missing kernel" "kernel $work/nope: No such file" \
	test-image --recipe "$work/r.conf" --vmlinuz "$work/nope" --modules "$kroot"
fails "no kernel given" "missing kernel" test-image --recipe "$work/r.conf"
fails "missing modules folder" "modules folder $work/nomods" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$work/nomods"
fails "kernel tree without --modules" "missing modules folder" \
	test-image --recipe "$work/r.conf" --kernel-tree "$work"
fails "missing kernel package" "kernel package $work/k.deb" \
	test-image --recipe "$work/r.conf" --kernel-deb "$work/k.deb"
fails "missing IGT prefix" "missing IGT prefix: $work/noigt" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --igt "$work/noigt"
mkdir -p "$work/igt/libexec/igt-gpu-tools" && cp /bin/true "$work/igt/libexec/igt-gpu-tools/"
fails "IGT without a testlist" "has no test-list.txt" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --igt "$work/igt"

printf 'igt@x\n' >"$work/list"
printf 'slink /etc/bootci/executor.conf elsewhere 0777 0 0\n' >"$work/conf-link.spec"
good_recipe 'spec = conf-link.spec'
fails "a testlist but executor.conf is a symlink" \
	"$work/conf-link.spec:1: /etc/bootci/executor.conf is not a file: the testlist cannot be set in it" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --testlist "$work/list"

good_recipe 'modules = no_such_module_xyz'
fails "unknown module" "unknown module 'no_such_module_xyz'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"

mkdir -p "$work/lib"
printf 'int f(void) { return 0; }\n' >"$work/f.c"
printf 'int f(void);\nint main(void) { return f(); }\n' >"$work/p.c"
gcc -shared -fPIC -o "$work/lib/libgone.so" "$work/f.c" &&
	gcc -o "$work/p" "$work/p.c" -L"$work/lib" -lgone && rm "$work/lib/libgone.so"
good_recipe "program = $work/p /usr/bin/p"
fails "unresolved library" "unresolved library 'libgone.so' needed by /usr/bin/p" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"

printf 'image = test\n# fine\nspce = small.spec\n' >"$work/r.conf"
fails "bad recipe key" "$work/r.conf:3: unknown key 'spce'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'image = test\njust words\n' >"$work/r.conf"
fails "recipe line without =" "$work/r.conf:2: expected 'key = value'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'image = test\ncompress = lz5\n' >"$work/r.conf"
fails "bad recipe value" "$work/r.conf:2: compress: unknown compression 'lz5'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'image = test\nspec = ${NOT_SET_ANYWHERE}/x\n' >"$work/r.conf"
fails "unset variable in the recipe" "$work/r.conf:2: variable 'NOT_SET_ANYWHERE' is not set" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
fails "missing recipe" "recipe $work/none.conf" \
	test-image --recipe "$work/none.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
good_recipe
fails "test recipe given to known-good" "'image = test' recipe given to known-good" \
	known-good --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'image = known-good\nspec = small.spec\n' >"$work/r.conf"
fails "known-good recipe without fixed GUIDs" "needs disk_guid" \
	known-good --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
good_recipe
sed -i 's/uki = no/uki = yes/' "$work/r.conf"
fails "missing EFI stub (uki = yes)" "EFI stub $work/stub" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --stub "$work/stub"

# The executor.conf and testlist the image carries are checked with the
# executor's own key table and testlist parser, naming the line that packs them.
printf 'file /etc/bootci/executor.conf %s 0644 0 0\n' "$work/executor.conf" >"$work/conf.spec"
printf 'run_id = x\ntset = /bin/true\n' >"$work/executor.conf"
good_recipe 'spec = conf.spec'
fails "unknown key in the packed executor.conf" \
	"$work/conf.spec:1: /etc/bootci/executor.conf: $work/executor.conf:2: unknown key 'tset'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf '# fine\n\nper_test_timeout = soon\n' >"$work/executor.conf"
fails "bad value in the packed executor.conf" \
	"$work/conf.spec:1: /etc/bootci/executor.conf: $work/executor.conf:3: per_test_timeout: 'soon' is not a duration" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'abort_on = taint, oops\n' >"$work/executor.conf"
fails "a value the type allows but the key does not" \
	"$work/executor.conf:1: abort_on: unknown condition 'oops'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'run_id = ../escaped\n' >"$work/executor.conf"
fails "a run_id that is not a name (it would leave runs/)" \
	"$work/executor.conf:1: run_id: '../escaped' is not a name" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'suspend_after = mem@3\n' >"$work/executor.conf"
fails "suspend cycles without a testlist" \
	"$work/executor.conf:1: suspend_after: 'mem@3' needs a testlist" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'testlist = /etc/bootci/nowhere\n' >"$work/executor.conf"
fails "a testlist the image lacks" \
	"/etc/bootci/executor.conf: testlist /etc/bootci/nowhere is not in the image" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'run_id = x\n' >"$work/executor.conf"
printf 'igt@ok\nigt@bad name\n' >"$work/badlist"
fails "a testlist that does not parse" \
	"$work/badlist:2:" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --testlist "$work/badlist"
printf 'runid = x\n' >"$work/executor.conf"
good_recipe "file = $work/executor.conf /etc/bootci/executor.conf"
fails "unknown key in an executor.conf the recipe packs" \
	"$work/r.conf:5: /etc/bootci/executor.conf: $work/executor.conf:1: unknown key 'runid'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'run_id = x\n' >"$work/executor.conf"
good_recipe 'spec = conf.spec'
echo 'cmdline = console=ttyS0 bootci.per_test_timout=5m' >>"$work/r.conf"
fails "unknown bootci. key on the recipe's command line" \
	"$work/r.conf: cmdline: kernel command line: unknown key 'per_test_timout'" \
	test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"
printf 'image = known-good\nspec = small.spec\nspec = conf.spec\nuki = no\n' >"$work/r.conf"
printf 'disk_guid = 6b6f6f62-6369-4b47-8000-000000000001\nesp_partuuid = 6b6f6f62-6369-4b47-8000-000000000002\n' >>"$work/r.conf"
printf 'results_partuuid = 6b6f6f62-6369-4b47-8000-000000000003\nresults_fs_uuid = 6b6f6f62-6369-4b47-8000-000000000004\n' >>"$work/r.conf"
printf 'on_finish = halt\n' >"$work/executor.conf"
fails "known-good: bad value in the packed executor.conf" \
	"$work/conf.spec:1: /etc/bootci/executor.conf: $work/executor.conf:1: on_finish: 'halt' is not one of reboot|poweroff" \
	known-good --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot"

# A manifest asked inside the output folder, which the build replaces whole, is refused first.
good_recipe
rm -rf "$work/out" && mkdir "$work/out" && echo previous >"$work/out/marker"
"$builder" test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --out "$work/out" \
	--manifest "$work/out/manifest" >"$work/stdout" 2>"$work/stderr"
status=$?
check "a manifest inside --out is refused, named, nothing changed" \
	test "$status" != 0 -a "$(ls -A "$work/out")" = marker -a -z "$(compgen -G "$work/out.tmp.*")"
check "... saying why" grep -qF -- "--manifest $work/out/manifest is inside --out $work/out, which the build replaces whole" "$work/stderr"

# A good build replaces the previous folder whole.
good_recipe
rm -rf "$work/out" && mkdir "$work/out" && echo previous >"$work/out/marker"
"$builder" test-image --recipe "$work/r.conf" --vmlinuz "$vmlinuz" --modules "$kroot" --out "$work/out"
check "a good build replaces the previous folder whole" \
	test "$(ls "$work/out" | tr '\n' ' ')" = "boot.ipxe initrd.img vmlinuz "
check "and leaves no temporary" test -z "$(compgen -G "$work/out.tmp.*")"

done_testing
