# shellcheck shell=bash
# Sourced by `make demo` (tests/lab/demo): the mailing list a lab's CI follows, made of the real
# parts: Patchwork 3.1.3 (../shared/patchwork/, unpacked, on Debian's Django and SQLite: its
# README) and an SMTP server (Debian's aiosmtpd, saving what it receives), both on 127.0.0.1 as
# `nobody` when this runs as root, started and stopped by PID. The lab's "kernel tree" is a
# small git repository of the test image's recipe and testlists (tests/lab/build-series builds
# it); its series are mailed to the list as git send-email would, and Patchwork parses them as
# it parses a list's mail (parse_mail). Needs LOOP_WORK (loop.sh). Sets:
#   LIST_PW_URL      Patchwork's base URL; its project is `demo`, the list demo@lists.bootci.test
#   LIST_PW_TOKEN    a file holding the token of Patchwork's user `ci`, the project's maintainer
#   LIST_SMTP_URL    the SMTP server's smtp:// URL; what it received in LIST_DIR/smtp/received/
#   LIST_TREE        the kernel tree (branch master)
# and calls list_stop from the caller's EXIT trap.

LIST_DIR=$LOOP_WORK/list
LIST_PROJECT=demo
LIST_ADDRESS=demo@lists.bootci.test
list_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
list_smtp_pid=
# Patchwork's unpacking, user, start and stop, as the tests have them: in LIST_DIR/pw (it reads
# SRC and work when its functions run).
SRC=$list_src
work=$LIST_DIR
# shellcheck source=tests/aggregator/patchwork-lib.sh
. "$list_src/tests/aggregator/patchwork-lib.sh"

# list_listening PORT: something accepts connections on 127.0.0.1:PORT
list_listening() {
	(: >"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# list_start: Patchwork (a project `demo`, its maintainer `ci`) and the SMTP server, running
list_start() {
	local why tokens port tries=0
	why=$(pw_missing)
	[ -z "$why" ] || { echo "Patchwork cannot run here: $why" >&2; return 1; }
	rm -rf "$LIST_DIR"
	mkdir -p "$LIST_DIR/smtp/received"
	pw_unpack
	admin settings || return 1
	tokens=$(admin setup "$LIST_PROJECT" "${LIST_ADDRESS/@/.}") || return 1
	LIST_PW_TOKEN=$LOOP_WORK/tokens/patchwork
	mkdir -p "$(dirname "$LIST_PW_TOKEN")"
	(umask 077 && printf '%s\n' "${tokens%% *}" >"$LIST_PW_TOKEN")
	if ! pw_run; then
		echo "Patchwork did not answer on $pw_url; its log:" >&2
		tail -n 20 "$work/patchwork.log" >&2
		return 1
	fi
	LIST_PW_URL=$pw_url
	port=$(master_free_port)
	# shellcheck disable=SC2034 # the caller uses it
	LIST_SMTP_URL=smtp://127.0.0.1:$port
	[ "$(id -u)" != 0 ] || chown -R nobody:nogroup "$LIST_DIR/smtp"
	(cd "$LIST_DIR/smtp" && exec "${run_as[@]}" env PYTHONDONTWRITEBYTECODE=1 \
		PYTHONPATH="$list_src/tests/aggregator" "$python" -m aiosmtpd -n \
		-l "127.0.0.1:$port" -c smtp_save.Save "$LIST_DIR/smtp") >>"$LIST_DIR/smtp.log" 2>&1 &
	list_smtp_pid=$!
	until list_listening "$port"; do
		tries=$((tries + 1))
		if [ $tries -gt 100 ]; then
			echo "the SMTP server did not listen on 127.0.0.1:$port; its log:" >&2
			tail -n 20 "$LIST_DIR/smtp.log" >&2
			return 1
		fi
		sleep 0.2
	done
}

# list_tree: the lab's kernel tree, one commit on master: the test image's recipe (its paths
# made absolute: the recipe is read from the tree's clone) and the loop's two testlists
list_tree() {
	LIST_TREE=$LIST_DIR/tree
	git init -q -b master "$LIST_TREE"
	git -C "$LIST_TREE" config user.name 'Lab Tree'
	git -C "$LIST_TREE" config user.email tree@bootci.test
	sed "s#\.\./#$list_src/#g" "$list_src/images/test-image.conf" >"$LIST_TREE/test-image.conf"
	cp "$list_src/tests/lab/loop/fast.testlist" "$list_src/tests/lab/loop/full.testlist" "$LIST_TREE/"
	git -C "$LIST_TREE" add .
	git -C "$LIST_TREE" commit -qm "demo: the lab's test image and its testlists"
}

# list_mail_series TITLE FROM: the commits of LIST_TREE's current branch above master, mailed to
# the list from FROM ("Name <address>") with a cover letter titled TITLE, threaded, and parsed
# by Patchwork as its list's mail; the messages in LIST_DIR/outgoing/
list_mail_series() {
	local title=$1 from=$2 out=$LIST_DIR/outgoing f name email
	name=${from% <*}
	email=${from##*<}
	email=${email%>}
	rm -rf "$out"
	# The sender's own identity: the cover letter's From and the Message-IDs are the committer's.
	git -C "$LIST_TREE" -c user.name="$name" -c user.email="$email" format-patch -q \
		--cover-letter --thread=shallow -n -o "$out" --to="$LIST_ADDRESS" \
		--add-header="List-Id: <${LIST_ADDRESS/@/.}>" master
	TITLE=$title "$python" - "$out"/*cover-letter.patch <<'PY'
import os, sys
path, title = sys.argv[1], os.environ["TITLE"]
text = open(path).read().replace("*** SUBJECT HERE ***", title, 1).replace("*** BLURB HERE ***", title + ".", 1)
open(path, "w").write(text)
PY
	for f in "$out"/*.patch; do
		cat "$f"
		echo
	done >"$LIST_DIR/series.mbox"
	chmod 0644 "$LIST_DIR/series.mbox"
	admin parse "$LIST_DIR/series.mbox"
}

# list_checks SERIES: every check on SERIES's patches as Patchwork's REST API gives them, a
# patch's subject then its checks: "    CONTEXT STATE: DESCRIPTION <TARGET_URL>"
list_checks() {
	"$python" - "$LIST_PW_URL" "$1" <<'PY'
import json, sys, urllib.request
base, series = sys.argv[1], sys.argv[2]
get = lambda url: json.load(urllib.request.urlopen(url))
for p in sorted(get(f"{base}/api/1.2/series/{series}/")["patches"], key=lambda p: p["id"]):
    print(p["name"])
    for c in get(f"{base}/api/1.2/patches/{p['id']}/checks/?per_page=100"):
        print(f"    {c['context']} {c['state']}: {c['description']} <{c['target_url']}>")
PY
}

# list_received: the messages the SMTP server received, one path a line, in order
list_received() {
	ls -1v "$LIST_DIR/smtp/received"/*.eml 2>/dev/null
}

# list_leftovers: this list's processes still alive (Patchwork, the SMTP server); nothing printed
# when there are none
list_leftovers() {
	# shellcheck disable=SC2009 # the arguments are what tell this list's processes apart
	ps -eo pid=,args= | grep -F -e "$LIST_DIR/" | grep -v -e grep -e 'ps -eo' || true
}

# list_stop: Patchwork and the SMTP server stopped
list_stop() {
	[ -z "${pw_pid:-}" ] || pw_stop || true
	if [ -n "$list_smtp_pid" ]; then
		kill -TERM "$list_smtp_pid" 2>/dev/null || true
		wait "$list_smtp_pid" 2>/dev/null || true
		list_smtp_pid=
	fi
}
