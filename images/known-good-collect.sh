#!/bin/sh
# The known-good image's test program (known-good-executor.conf `test=`): the
# network, then bootci-collect with the arguments given here.
# Glue only: the NIC driver is loaded by the executor (modules=), the address
# comes from DHCP (busybox udhcpc; Debian's kernel has no ip= autoconfiguration),
# and collect does the rest. No network: collect still runs, finds the master
# out of reach, and every run stays for the next boot.
PATH=/bin:/usr/bin
export PATH

say() {
	echo "bootci-collect: $*" >/dev/console
}

busybox ip link set lo up

# The NIC's netdev appears when its driver's probe ends: give it a few seconds.
iface=""
tries=0
while [ -z "$iface" ] && [ $tries -lt 50 ]; do
	for dev in /sys/class/net/*; do
		name=${dev##*/}
		[ "$name" = lo ] || [ ! -e "$dev" ] || { iface=$name; break; }
	done
	[ -n "$iface" ] || { busybox sleep 0.2; tries=$((tries + 1)); }
done

if [ -z "$iface" ]; then
	say "no network interface (is the NIC's driver in the image?)"
else
	busybox ip link set "$iface" up
	# -n: give up after -t tries instead of running in the background; -q: exit once bound.
	if busybox udhcpc -i "$iface" -s /etc/bootci/udhcpc.script -n -q -t 5 -T 2 -A 1 >/dev/console 2>&1; then
		say "$iface: $(busybox ip -4 -o addr show dev "$iface" | busybox awk '{print $4}')"
	else
		say "$iface: no DHCP answer"
	fi
fi

exec /usr/bin/bootci-collect "$@"
