#!/usr/bin/env python3
"""Test helper for tests/aggregator/serve*.t: builds run archives (good and
hostile) and speaks HTTP to `bootci-aggregator serve` over a raw socket, so a
test controls every byte: interrupted bodies, one byte at a time, many at once.

  serve-tool.py archive KIND OUT [--machine M] [--run R] [--dir DIR]
      writes OUT (tar.zst) and prints its sha256
  serve-tool.py put URL FILE [--token T] [--sha256 H] [--from N] [--stop-after N [--at-once]]
                    [--pause-after N --pause S] [--no-length]
      prints "STATUS BODY" (or "CUT" when --stop-after closed the connection: 0.3 s after
      its last byte, or with --at-once right after it, the bytes and the close together)
  serve-tool.py get URL [--token T]           prints "STATUS BODY"
  serve-tool.py raw HOST PORT REQUEST-LINE-PATH [--token T]   a GET with the path as is
  serve-tool.py slow URL [--token T] --interval S
      one body byte every S seconds; prints "closed after N bytes" or the answer
  serve-tool.py load URL-BASE TOKENS-DIR --clients N [--dir DIR]
      N machines upload at once (DIR's files and 256 KiB of noise each); prints
      "machine status ok|FAILED sha256" per machine, ok when 201, ingested, same digest
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.parse

MANIFEST_FORMAT = "bootci-manifest"


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def manifest_for(machine, run, files):
    """manifest.json (lib/manifest.h, format_version 1) for {path: bytes}."""
    return {
        "format": MANIFEST_FORMAT,
        "format_version": 1,
        "run_id": run,
        "image_id": "test-image",
        "machine": machine,
        "kernel": "6.1.0-test",
        "cmdline": "console=ttyS0",
        "versions": {"igt": "1.28", "bootci": "0.1"},
        "boots": {"boot-0001": {"dmi.product": "Standard PC"}},
        "efi": {"boot_current": None, "boot_order": [], "entries": []},
        "files": [{"path": p, "size": len(d), "sha256": sha256_hex(d)}
                  for p, d in sorted(files.items())],
    }


def add_bytes(tar, name, data, kind=tarfile.REGTYPE, linkname=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o644
    info.mtime = 0
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
            info.devmajor, info.devminor = 1, 3
        tar.addfile(info)


def read_dir(path):
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if rel == "manifest.json":
                continue
            with open(full, "rb") as f:
                files[rel] = f.read()
    return files


def default_files(run):
    return {
        "journal.txt": b"started\n",
        "0/out.txt": ("output of %s\n" % run).encode(),
        "0/err.txt": b"",
        "0/dmesg.txt": b"<6>[    1.0] hello\n",
    }


def zstd(raw):
    return subprocess.run(["zstd", "-q", "-c", "-3"], input=raw, stdout=subprocess.PIPE,
                          check=True).stdout


def build_tar(machine, run, files, extra=(), manifest=None, manifest_bytes=None,
              form=tarfile.PAX_FORMAT):
    """A tar: manifest.json first, then files, then extra (name, data, kind, link)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=form) as tar:
        if manifest_bytes is None:
            m = manifest if manifest is not None else manifest_for(machine, run, files)
            manifest_bytes = json.dumps(m, indent=1).encode()
        add_bytes(tar, "manifest.json", manifest_bytes)
        for path in sorted(files):
            add_bytes(tar, path, files[path])
        for name, data, kind, link in extra:
            add_bytes(tar, name, data, kind, link)
    return buf.getvalue()


def ustar_header(name, size, typeflag):
    """One ustar header block (for archives too large to build with tarfile in time)."""
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000755\0" if typeflag == b"5" else b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[148:156] = b"        "
    h[156:157] = typeflag
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def archive_million(machine, run, out, count=200001):
    """manifest.json listing `count` empty files, then the files: only the entry limit stops it."""
    files = ["f%07d" % i for i in range(count)]
    m = manifest_for(machine, run, {})
    empty = sha256_hex(b"")
    m["files"] = [{"path": p, "size": 0, "sha256": empty} for p in files]
    mb = json.dumps(m).encode()
    proc = subprocess.Popen(["zstd", "-q", "-c", "-1"], stdin=subprocess.PIPE, stdout=out)
    pad = lambda n: b"\0" * ((512 - n % 512) % 512)
    proc.stdin.write(ustar_header(b"manifest.json", len(mb), b"0") + mb + pad(len(mb)))
    block = []
    for p in files:
        block.append(ustar_header(p.encode(), 0, b"0"))
        if len(block) == 4096:
            proc.stdin.write(b"".join(block))
            block = []
    proc.stdin.write(b"".join(block) + b"\0" * 1024)
    proc.stdin.close()
    proc.wait()


def archive_bomb(machine, run, out, size=7 << 30):
    """A file of `size` zero bytes, of which the first MiB is written: its header
    already says more than a file may hold, so nothing past it is read (and the
    manifest's sha256 for it, never reached, is made up)."""
    chunk = b"\0" * (1 << 20)
    m = manifest_for(machine, run, {})
    m["files"] = [{"path": "zeros.bin", "size": size, "sha256": "0" * 64}]
    mb = json.dumps(m).encode()
    proc = subprocess.Popen(["zstd", "-q", "-c", "-1"], stdin=subprocess.PIPE, stdout=out)
    pad = lambda n: b"\0" * ((512 - n % 512) % 512)
    proc.stdin.write(ustar_header(b"manifest.json", len(mb), b"0") + mb + pad(len(mb)))
    proc.stdin.write(ustar_header(b"zeros.bin", size, b"0"))
    proc.stdin.write(chunk)
    proc.stdin.close()
    proc.wait()


def cmd_archive(a):
    machine, run = a.machine, a.run
    files = read_dir(a.dir) if a.dir else default_files(run)
    kind = a.kind
    if kind in ("million", "bomb"):
        with open(a.out, "wb") as out:
            (archive_million if kind == "million" else archive_bomb)(machine, run, out)
        with open(a.out, "rb") as f:
            print(sha256_hex(f.read()))
        return 0
    extra = []
    manifest = None
    manifest_bytes = None
    if kind == "good":
        pass
    elif kind == "dotdot":
        extra = [("../escape.txt", b"x", tarfile.REGTYPE, "")]
    elif kind == "absolute":
        extra = [("/tmp/escape.txt", b"x", tarfile.REGTYPE, "")]
    elif kind == "symlink":
        extra = [("0/link", b"", tarfile.SYMTYPE, "../../../etc/passwd")]
    elif kind == "hardlink":
        extra = [("0/hard", b"", tarfile.LNKTYPE, "../../etc/passwd")]
    elif kind == "device":
        extra = [("0/null", b"", tarfile.CHRTYPE, "")]
    elif kind == "fifo":
        extra = [("0/fifo", b"", tarfile.FIFOTYPE, "")]
    elif kind == "lies":
        manifest = manifest_for(machine, run, files)
        manifest["files"][0]["sha256"] = "0" * 64
    elif kind == "unlisted":
        extra = [("0/extra.txt", b"not in the manifest", tarfile.REGTYPE, "")]
    elif kind == "badjson":
        manifest_bytes = b'{"format": "bootci-manifest", "format_version": 1,'
    elif kind == "otherrun":
        manifest = manifest_for(machine, run + "x", files)
    elif kind in ("gnu", "gzip"):
        pass
    else:
        print("unknown kind " + kind, file=sys.stderr)
        return 2
    if kind == "gnu":
        data = zstd(build_tar(machine, run, files, form=tarfile.GNU_FORMAT))
    elif kind == "gzip":
        data = gzip.compress(build_tar(machine, run, files), mtime=0)
    else:
        data = zstd(build_tar(machine, run, files, extra, manifest, manifest_bytes))
    with open(a.out, "wb") as f:
        f.write(data)
    print(sha256_hex(data))
    return 0


def connect(url):
    u = urllib.parse.urlsplit(url)
    s = socket.create_connection((u.hostname, u.port), timeout=120)
    return s, u


def read_response(s):
    """Status and body of one HTTP/1.1 answer (Content-Length or until close)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            if not data:
                return None, ""
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = None
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    while length is not None and len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, body.decode("utf-8", "replace").strip()


def request_head(method, path, host, token, extra_headers):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % host]
    if token:
        lines.append("Authorization: Bearer " + token)
    lines += extra_headers
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def put(url, data, token, sha, start=0, stop_after=None, pause_after=None, pause=0,
        no_length=False, at_once=False):
    s, u = connect(url)
    headers = ["X-Bootci-Sha256: " + sha]
    body = data[start:]
    if start:
        headers.append("Content-Range: bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
    if no_length:
        headers.append("Transfer-Encoding: chunked")
    else:
        headers.append("Content-Length: %d" % len(body))
    try:
        s.sendall(request_head("PUT", u.path, u.netloc, token, headers))
        if no_length:
            for i in range(0, len(body), 65536):
                part = body[i:i + 65536]
                s.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            s.sendall(b"0\r\n\r\n")
        elif stop_after is not None:
            s.sendall(body[:stop_after])
            if not at_once:
                time.sleep(0.3)
            s.close()
            return "CUT", ""
        elif pause_after is not None:
            s.sendall(body[:pause_after])
            time.sleep(pause)
            s.sendall(body[pause_after:])
        else:
            s.sendall(body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # answered before the body was read: the answer is still there
    try:
        status, text = read_response(s)
    except (ConnectionResetError, OSError):
        status, text = None, ""
    s.close()
    return status, text


def cmd_put(a):
    with open(a.file, "rb") as f:
        data = f.read()
    sha = a.sha256 or sha256_hex(data)
    status, text = put(a.url, data, a.token, sha, a.start, a.stop_after, a.pause_after,
                       a.pause, a.no_length, a.at_once)
    print(status, text)
    return 0


def cmd_get(a):
    s, u = connect(a.url)
    s.sendall(request_head("GET", u.path, u.netloc, a.token, []))
    status, text = read_response(s)
    print(status, text)
    return 0


def cmd_raw(a):
    s = socket.create_connection((a.host, a.port), timeout=30)
    s.sendall(request_head(a.method, a.path, a.host, a.token,
                           ["X-Bootci-Sha256: " + "0" * 64, "Content-Length: 0"]))
    status, text = read_response(s)
    print(status, text)
    return 0


def cmd_slow(a):
    s, u = connect(a.url)
    s.sendall(request_head("PUT", u.path, u.netloc, a.token,
                           ["X-Bootci-Sha256: " + "0" * 64, "Content-Length: 1000"]))
    sent = 0
    began = time.monotonic()
    try:
        for _ in range(1000):
            time.sleep(a.interval)
            s.sendall(b"x")
            sent += 1
            if time.monotonic() - began > a.give_up:
                print("still open after %d bytes" % sent)
                return 1
        print("server took all 1000 bytes")
        return 1
    except (BrokenPipeError, ConnectionResetError):
        print("closed after %d bytes" % sent)
        return 0


def cmd_load(a):
    results = {}

    def one(i):
        machine = "load%02d" % i
        with open(os.path.join(a.tokens_dir, machine)) as f:
            token = f.read().strip()
        files = read_dir(a.dir) if a.dir else default_files("r%d" % i)
        files["noise.bin"] = os.urandom(256 * 1024)  # incompressible: real bytes on the wire
        data = zstd(build_tar(machine, "run1", files))
        url = "%s/api/v1/machines/%s/runs/run1" % (a.url, machine)
        try:
            status, text = put(url, data, token, sha256_hex(data))
            answer = json.loads(text) if status == 201 else {}
            ok = answer.get("sha256") == sha256_hex(data) and answer.get("ingested") is True
        except Exception as e:  # reported, counted as a failure
            status, ok = "error %s" % e, False
        results[machine] = (status, ok, sha256_hex(data))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    for machine in sorted(results):
        status, ok, sha = results[machine]
        print(machine, status, "ok" if ok else "FAILED", sha)
    return 0 if len(results) == a.clients and all(r[1] for r in results.values()) else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    x = sub.add_parser("archive")
    x.add_argument("kind")
    x.add_argument("out")
    x.add_argument("--machine", default="m1")
    x.add_argument("--run", default="run1")
    x.add_argument("--dir")
    x = sub.add_parser("put")
    x.add_argument("url")
    x.add_argument("file")
    x.add_argument("--token")
    x.add_argument("--sha256")
    x.add_argument("--from", dest="start", type=int, default=0)
    x.add_argument("--stop-after", type=int)
    x.add_argument("--at-once", action="store_true")
    x.add_argument("--pause-after", type=int)
    x.add_argument("--pause", type=float, default=0)
    x.add_argument("--no-length", action="store_true")
    x = sub.add_parser("get")
    x.add_argument("url")
    x.add_argument("--token")
    x = sub.add_parser("raw")
    x.add_argument("host")
    x.add_argument("port", type=int)
    x.add_argument("path")
    x.add_argument("--method", default="PUT")
    x.add_argument("--token")
    x = sub.add_parser("slow")
    x.add_argument("url")
    x.add_argument("--token")
    x.add_argument("--interval", type=float, required=True)
    x.add_argument("--give-up", type=float, default=60)
    x = sub.add_parser("load")
    x.add_argument("url")
    x.add_argument("tokens_dir")
    x.add_argument("--clients", type=int, default=40)
    x.add_argument("--dir")
    a = p.parse_args()
    return {"archive": cmd_archive, "put": cmd_put, "get": cmd_get, "raw": cmd_raw,
            "slow": cmd_slow, "load": cmd_load}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
