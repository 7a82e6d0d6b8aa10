#!/usr/bin/env bash
# Builds the static musl sysroot that bootci-executor, bootci-efi and
# bootci-collect link against, from Debian source packages fetched with
# `apt-get source` (apt checks their signatures and hashes). One log per library
# under $OUT/logs; a failing step prints its tail.
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

build_openssl() {
	[ ! -e configdata.pm ] || make distclean
	# libssl and libcrypto for bootci-collect's libcurl: a TLS client, nothing
	# else. No modules or engines (a static binary loads none), no DTLS, SRP,
	# PSK or compression, and none of the ciphers and formats a client of a
	# master never meets (the legacy provider's, the national ones, CMS, CT).
	# Asynchronous jobs need makecontext(), which musl does not have.
	./Configure linux-x86_64 --prefix="$prefix" --libdir=lib --openssldir=/etc/ssl \
		no-shared no-module no-engine no-dso no-tests no-afalgeng no-async no-ktls \
		no-ssl3 no-dtls no-srp no-psk no-srtp no-sctp no-comp no-ui-console no-capieng \
		no-legacy no-aria no-bf no-blake2 no-camellia no-cast no-cms no-cmp no-ct no-des \
		no-dsa no-ec2m no-gost no-idea no-md4 no-mdc2 no-ocb no-rc2 no-rc4 no-rc5 \
		no-rmd160 no-scrypt no-seed no-siphash no-siv no-sm2 no-sm3 no-sm4 no-ts \
		no-whirlpool
	make -j"$jobs" build_libs
	make install_dev
}

build_curl() {
	[ ! -e config.status ] || make distclean
	# Debian's source comes with its GnuTLS and NSS flavors' patches applied last
	# (they rename the library); its OpenSSL flavor takes them off, and so do we.
	local p
	for p in 99_nss 90_gnutls; do
		if patch -R -p1 -s -f --dry-run <"debian/patches/$p.patch" >/dev/null 2>&1; then
			patch -R -p1 -s -f <"debian/patches/$p.patch"
		fi
	done
	autoreconf -fi
	# HTTP and HTTPS (OpenSSL), nothing collect does not use: no other protocol,
	# no compression, no IDN, HTTP/2, cookies or netrc, no OpenSSL configuration
	# file read at start. The CA bundle is where Debian's ca-certificates puts
	# it, which the known-good image carries.
	./configure --prefix="$prefix" --disable-shared --enable-static \
		--with-openssl="$prefix" --disable-openssl-auto-load-config \
		--with-ca-bundle=/etc/ssl/certs/ca-certificates.crt --without-ca-path \
		--disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
		--disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap \
		--disable-smb --disable-smtp --disable-gopher --disable-mqtt --disable-manual \
		--disable-ntlm --disable-ntlm-wb --disable-tls-srp --disable-cookies \
		--disable-netrc --disable-alt-svc --disable-hsts --disable-doh --disable-mime \
		--disable-dateparse --disable-websockets --disable-libcurl-option \
		--without-zlib --without-brotli --without-zstd --without-libpsl --without-libidn2 \
		--without-nghttp2 --without-ngtcp2 --without-nghttp3 --without-librtmp \
		--without-libssh2 --without-libssh --without-libgsasl
	make -C lib -j"$jobs" libcurl.la
	make -C lib install-libLTLIBRARIES
	make -C include install
	install -m 0644 libcurl.pc "$prefix/lib/pkgconfig/"
}

build_json_c() {
	cmake -S . -B build-musl -DCMAKE_C_COMPILER=musl-gcc -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
		-DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DBUILD_TESTING=OFF \
		-DDISABLE_EXTRA_LIBS=ON -DDISABLE_WERROR=ON
	cmake --build build-musl -j"$jobs"
	cmake --install build-musl
}

step zlib "$SYSROOT_ZLIB" build_zlib
step libzstd "$SYSROOT_LIBZSTD" build_libzstd
step xz-utils "$SYSROOT_XZ_UTILS" build_xz
step kmod "$SYSROOT_KMOD" build_kmod
step util-linux "$SYSROOT_UTIL_LINUX" build_util_linux
step libarchive "$SYSROOT_LIBARCHIVE" build_libarchive
step nettle "$SYSROOT_NETTLE" build_nettle
step openssl "$SYSROOT_OPENSSL" build_openssl
step curl "$SYSROOT_CURL" build_curl
step json-c "$SYSROOT_JSON_C" build_json_c
