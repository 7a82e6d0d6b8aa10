#!/usr/bin/env bash
# A re-deploy through a real `serve` on 127.0.0.1: a person marks a machine's
# disk damaged with `schedule redeploy`, its next boot request gets the deploy
# job instead of its queued test job, the deploy initrd unpacks to the plan
# (naming the deploy's id) and the newest known-good disk.img whose digest the
# plan names. A boot request before the deploy's record came in is a deploy
# that did not finish (a power cut): the same deploy job again, the same
# deploy id. Once the machine uploaded the record (the run named after the
# deploy id, with its token), the next boot request clears the mark (deploy.h).
# shellcheck source=tests/aggregator/serve-lib.sh
set -uo pipefail
. "$SRC/tests/aggregator/serve-lib.sh"

data=$work/data
image=$work/image
mkdir -p "$data" "$image"
: >"$work/tokens"
add_machine solo token-of-solo
printf '[machine solo]\nmac = 52:54:00:00:00:01\n' >"$data/machines.conf"

head -c 4096 /dev/urandom >"$image/vmlinuz"
head -c 8192 /dev/urandom >"$image/initrd.img"
printf '#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0\ninitrd initrd.img\nboot\n' >"$image/boot.ipxe"
printf 'igt@core@a\n' >"$image/fast.testlist"
printf 'igt@t@1\n' >"$image/full.testlist"
manifest_line() { printf '%s %s 100644 %s bootci-builder\n' "$(sha256sum <"$1/$2" | cut -d' ' -f1)" "$(stat -c %s "$1/$2")" "$2"; }
{
	echo "# bootci-builder manifest: SHA256 SIZE MODE PATH ORIGIN"
	for f in boot.ipxe initrd.img vmlinuz; do manifest_line "$image" "$f"; done
	echo "- 0 040755 initrd.img:/etc bootci-builder"
} >"$image/manifest"
for v in 1 2; do
	mkdir -p "$work/kg$v"
	head -c $((65536 * v)) /dev/urandom >"$work/kg$v/disk.img"
	manifest_line "$work/kg$v" disk.img >"$work/kg$v/manifest"
done
if "$aggregator" publish --data "$data" --tree t --commit abc --tier fast --build b1 "$image" >>"$work/publish.log" 2>&1 &&
	"$aggregator" publish --data "$data" --known-good 2026.12.1 "$work/kg1" >>"$work/publish.log" 2>&1 &&
	"$aggregator" publish --data "$data" --known-good 2026.12.2 "$work/kg2" >>"$work/publish.log" 2>&1; then
	ok "a build and two known-good versions are published"
else
	not_ok "publish"
	diag <"$work/publish.log"
fi

if ! "$aggregator" schedule --data "$data" redeploy nosuch >"$work/cmd.out" 2>&1 &&
	grep -q "no machine nosuch in the inventory" "$work/cmd.out" &&
	"$aggregator" schedule --data "$data" redeploy solo >"$work/cmd.out" 2>&1 &&
	"$aggregator" schedule --data "$data" machines >>"$work/cmd.out" 2>&1 &&
	grep -q "^solo .*disk damaged, re-deployed at its next boot: asked for by a person$" "$work/cmd.out"; then
	ok "schedule redeploy marks a machine of the inventory, schedule machines shows it"
else
	not_ok "schedule redeploy"
	diag <"$work/cmd.out"
fi

start_server
states=$(curl -sf "$base/api/v1/schedule/machines")
if python3 -c 'import json,sys; m=json.load(sys.stdin)["machines"][0]; assert m["disk"] == "damaged" and m["disk_note"] == "asked for by a person", m' <<<"$states"; then
	ok "the machines' states say the disk is damaged and why"
else
	not_ok "disk in the states"
	diag <<<"$states"
fi
boot() { curl -sf "$base/api/v1/boot/$1"; }
script=$(boot 52:54:00:00:00:01)
expected="#!ipxe
# bootci: solo is re-deployed with known-good image 2026.12.2
kernel $base/api/v1/builds/b1/files/vmlinuz initrd=deploy.img initrd=initrd.img console=ttyS0 bootci.mode=deploy bootci.deploy=/etc/bootci/deploy.plan
initrd --name deploy.img $base/api/v1/machines/solo/deploy/2026.12.2/initrd
initrd --name initrd.img $base/api/v1/builds/b1/files/initrd.img
boot"
if [ "$script" = "$expected" ]; then
	ok "the damaged machine's boot request gets the deploy job, with the newest known-good image"
else
	not_ok "deploy script"
	diag <<<"$script"
fi

mkdir -p "$work/unpacked"
# Two archives back to back, as the kernel reads several initrds: cut after the first trailer.
sha=$(sha256sum <"$work/kg2/disk.img" | cut -d' ' -f1)
if curl -sf "$base/api/v1/machines/solo/deploy/2026.12.2/initrd" -o "$work/deploy.img" &&
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); t=d.index(b"TRAILER!!!")+11; t+=-t%4; open(sys.argv[1]+".1","wb").write(d[:t]); open(sys.argv[1]+".2","wb").write(d[t:])' "$work/deploy.img" &&
	(cd "$work/unpacked" && cpio -i --quiet -d <"$work/deploy.img.1" && cpio -i --quiet -d <"$work/deploy.img.2") &&
	cmp -s "$work/unpacked/etc/bootci/known-good/disk.img" "$work/kg2/disk.img" &&
	grep -qx "image_sha256=$sha" "$work/unpacked/etc/bootci/deploy.plan" &&
	grep -qx "image_size=131072" "$work/unpacked/etc/bootci/deploy.plan" &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v1/machines/solo/deploy/2026.12.1/initrd")" = 404 ]; then
	ok "the deploy initrd holds the plan and the disk image the plan's digest names; another version is 404"
else
	not_ok "deploy initrd"
	diag <"$work/unpacked/etc/bootci/deploy.plan"
fi

deploy_id=$(sed -n 's/^deploy_id=//p' "$work/unpacked/etc/bootci/deploy.plan")
if [[ $deploy_id =~ ^deploy-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$ ]] &&
	grep -qx "deploy_id $deploy_id" "$data/schedule/deploying/solo"; then
	ok "the plan names the deploy's id ($deploy_id), the deploying mark too"
else
	not_ok "deploy id '$deploy_id'"
	diag <"$data/schedule/deploying/solo"
fi

# The machine asks again with no record of the deploy in: a power cut during the write, say.
script=$(boot 52:54:00:00:00:01)
if [ "$script" = "$expected" ] && grep -qx "deploy_id $deploy_id" "$data/schedule/deploying/solo" &&
	grep -q "solo: its re-deploy $deploy_id did not finish (no record came in): handed out again, try 2 of 3" "$work/server.log"; then
	ok "a boot request before the deploy's record came in: the same deploy job, the same deploy id"
else
	not_ok "deploy not finished"
	diag <<<"$script"
fi

# The deploy's last step writes its record as a run named after it; collect uploads it.
mkdir -p "$work/record/test"
printf 'command deploy 2026.12.2 sha256:%s\nstate done\nexit-status 0\nduration 25.000\n' "$sha" \
	>"$work/record/test/result.txt"
printf 'machine=solo\ndeploy_id=%s\nsalvaged=2\n' "$deploy_id" >"$work/record/test/out.txt"
python3 "$tool" archive good "$work/record.tar.zst" --machine solo --run "$deploy_id" --dir "$work/record" >/dev/null
answer=$(python3 "$tool" put "$(run_url solo "$deploy_id")" "$work/record.tar.zst" --token token-of-solo)
script=$(boot 52:54:00:00:00:01)
if [ "${answer%% *}" = 201 ] && grep -q "^# bootci: solo runs b1-fast " <<<"$script" &&
	grep -q "solo: back after its re-deploy (2026.12.2 (was: asked for by a person)): its record $deploy_id came in" "$work/server.log" &&
	[ ! -e "$data/schedule/deploying/solo" ] && [ ! -e "$data/schedule/damaged/solo" ] &&
	curl -sf "$base/api/v1/schedule/machines" | python3 -c 'import json,sys; assert json.load(sys.stdin)["machines"][0]["disk"] == "ok"'; then
	ok "the machine uploaded the deploy's record: the next boot request clears the mark, the queued job is next"
else
	not_ok "clearing ($answer)"
	diag <<<"$script"
fi
stop_server
if [ "$server_status" = 0 ]; then ok "serve stops cleanly"; else not_ok "serve exit $server_status"; fi
done_testing
