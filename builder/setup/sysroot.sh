#!/usr/bin/env bash
# Builds the static musl sysroot that bootci-executor links against, from Debian
# source packages fetched with `apt-get source` (apt checks their signatures and
# hashes). One log per library under $OUT/logs; a failing step prints its tail.
# Idempotent: a library whose stamp matches its pinned version is not rebuilt.
#
# usage: sysroot.sh OUTDIR
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
# shellcheck source=versions
. "$here/versions"

prefix=$out/sysroot
src=$out/src
logs=$out/logs
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$src" "$logs"

# musl-gcc sees neither /usr/include nor the host's libraries: the kernel UAPI
# headers are copied in, and only the sysroot is searched for libraries and .pc files.
uapi_stamp=$prefix/include/.uapi
if [ ! -e "$uapi_stamp" ]; then
	cp -a /usr/include/linux /usr/include/asm-generic "$prefix/include/"
	cp -a /usr/include/x86_64-linux-gnu/asm "$prefix/include/asm"
	touch "$uapi_stamp"
fi

export CC=musl-gcc
export CFLAGS="-O2 -g0 -isystem $prefix/include"
export CPPFLAGS="-isystem $prefix/include"
export LDFLAGS="-static -L$prefix/lib"
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=
unset PKG_CONFIG_PATH
jobs=$(nproc)

fail() {
	echo "sysroot: $1 failed; last lines of $2:" >&2
	tail -n 30 "$2" >&2
	exit 1
}

# fetch NAME VERSION: unpacks the source package into $src/NAME-VERSION, prints the dir
fetch() {
	local name=$1 version=$2 dir=$src/$1-$2
	if [ ! -d "$dir" ]; then
		local tmp=$src/.fetch-$name
		rm -rf "$tmp" && mkdir -p "$tmp"
		(cd "$tmp" && apt-get source -q "$name=$version") >"$logs/$name.fetch.log" 2>&1 ||
			fail "apt-get source $name=$version" "$logs/$name.fetch.log"
		local unpacked
		unpacked=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
		mv "$unpacked" "$dir"
		rm -rf "$tmp"
	fi
	echo "$dir"
}

# step NAME VERSION FUNCTION: builds unless the stamp says this version is installed
step() {
	local name=$1 version=$2 fn=$3 stamp=$prefix/.stamp-$1
	if [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then
		return 0
	fi
	local dir log=$logs/$name.log
	dir=$(fetch "$name" "$version")
	echo "sysroot: building $name $version"
	# Run in the background and wait: set -e stays in force inside the subshell,
	# which a `( ... ) || fail` would switch off.
	(cd "$dir" && "$fn") >"$log" 2>&1 &
	wait $! || fail "building $name" "$log"
	echo "$version" >"$stamp"
}

build_zlib() {
	./configure --static --prefix="$prefix"
	make -j"$jobs" libz.a
	make install
}

build_libzstd() {
	make -C lib -j"$jobs" libzstd.a-mt
	make -C lib install-static install-includes install-pc PREFIX="$prefix"
}

build_xz() {
	./configure --prefix="$prefix" --disable-shared --enable-static --disable-nls \
		--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo \
		--disable-lzma-links --disable-scripts --disable-doc
	make -j"$jobs"
	make install
}

build_kmod() {
	# kmod refuses a static build in configure.ac; we link it statically on purpose.
	sed -i '/--enable-static is not supported by kmod/d' configure.ac
	# kmod's own autogen.sh falls back to an empty gtk-doc.make without gtk-doc.
	[ -e libkmod/docs/gtk-doc.make ] || touch libkmod/docs/gtk-doc.make
	autoreconf -fi
	./configure --prefix="$prefix" --enable-static --disable-shared --disable-tools \
		--disable-manpages --disable-test-modules --disable-python --disable-logging \
		--with-xz --with-zstd --with-zlib --without-openssl
	make -j"$jobs" libkmod/libkmod.la
	make install-libLTLIBRARIES install-includeHEADERS install-pkgconfigDATA
}

build_util_linux() {
	./configure --prefix="$prefix" --disable-shared --enable-static --disable-all-programs \
		--enable-libblkid --disable-nls --without-python --without-systemd --without-udev \
		--without-readline --without-ncursesw --without-tinfo --disable-bash-completion \
		--without-cryptsetup --without-selinux --without-audit --without-smack \
		--without-libmagic --without-user
	make -j"$jobs" libblkid.la
	make install-usrlib_execLTLIBRARIES install-nodist_blkidincHEADERS install-pkgconfigDATA
}

build_libarchive() {
	# Debian's patches leave aclocal.m4 from a newer libtool than bookworm's.
	autoreconf -fi
	./configure --prefix="$prefix" --disable-shared --enable-static --without-iconv \
		--without-xml2 --without-expat --without-openssl --without-nettle --without-mbedtls \
		--without-lz4 --without-bz2lib --without-libb2 --without-lzo2 --without-cng \
		--disable-acl --disable-bsdtar --disable-bsdcpio --disable-bsdcat \
		--with-zlib --with-lzma --with-zstd
	make -j"$jobs" libarchive.la
	make install-libLTLIBRARIES install-includeHEADERS install-pkgconfigDATA
}

build_nettle() {
	# libnettle alone (SHA-256 for lib/sha256.h): no hogweed, so no GMP; the fat
	# build picks SHA-NI or plain code at run time, as Debian's does.
	./configure --prefix="$prefix" --libdir="$prefix/lib" --disable-shared --enable-static \
		--disable-public-key --disable-documentation --disable-openssl --enable-fat
	make -j"$jobs" libnettle.a
	make install-static install-headers
	install -m 0644 nettle.pc "$prefix/lib/pkgconfig/"
}

step zlib "$SYSROOT_ZLIB" build_zlib
step libzstd "$SYSROOT_LIBZSTD" build_libzstd
step xz-utils "$SYSROOT_XZ_UTILS" build_xz
step kmod "$SYSROOT_KMOD" build_kmod
step util-linux "$SYSROOT_UTIL_LINUX" build_util_linux
step libarchive "$SYSROOT_LIBARCHIVE" build_libarchive
step nettle "$SYSROOT_NETTLE" build_nettle
