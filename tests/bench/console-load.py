#!/usr/bin/env python3
"""What serve's console readers cost (issue 36 point 5), driven by serve-consoles.sh.

  console-load.py run AGGREGATOR WORK --machines N --seconds S --rounds R
      starts `bootci-aggregator serve` on WORK/data (GLIBC_TUNABLES as given in the
      environment's BENCH_SERVE_TUNABLES), N paced consoles and one flooding one, and
      measures R rounds of three phases of S seconds each, under the same client load:
        off      the inventory names no console (the peer)
        on       N consoles at 115200 baud (11,520 bytes a second each, 8N1)
        flood    the same, and one more console sending as fast as serve reads
      (in turn, so that the host's drift over the run falls on all three).
      The load: boot answers (GET /api/v1/boot/MAC, a new connection each, 20 a
      second) and small uploads (PUT of a 40 KiB run, answered once kept and
      ingested, 4 a second). Prints per phase their p50/p99, serve's CPU seconds,
      what it wrote to storage, what the consoles keep; then the cost per
      machine-hour of console and the ratios to the peer.
  console-load.py feed PORTS-FILE FLOOD-FLAG SENT-FILE --machines N
      (its own process, so its sending never competes with the client's timing
      for one interpreter) listens for N + 1 consoles on 127.0.0.1, writes their
      ports to PORTS-FILE; paced ones get kernel and IGT console text at 115200
      baud; the last floods while FLOOD-FLAG exists; the bytes sent per console
      go to SENT-FILE each second.
"""
import argparse
import http.client
import importlib.util
import json
import os
import random
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BAUD_BYTES = 115200 // 10  # 8N1: ten bits a byte
TICK = 0.1

FIRMWARE = b"\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H\r\n"
LINES = [
    "i915 0000:00:02.0: [drm] GT0: GuC firmware i915/tgl_guc_70.bin version 70.20.0",
    "i915 0000:00:02.0: [drm] GT0: HuC firmware i915/tgl_huc.bin version 7.9.3",
    "[drm] Initialized i915 1.6.0 20201103 for 0000:00:02.0 on minor 0",
    "Console: switching to colour frame buffer device 240x67",
    "usb 1-4: new high-speed USB device number 3 using xhci_hcd",
    "EXT4-fs (vda2): mounted filesystem 4f1c7e2a-9d0b-4c55-8f3e-2a61b7d0c9e4 r/w with ordered data mode.",
    "[IGT] kms_flip: executing",
    "[IGT] kms_flip: starting subtest flip-vs-panning",
    "[IGT] kms_flip: starting dynamic subtest A-eDP1",
    "[IGT] kms_flip: finished subtest A-eDP1, SUCCESS",
    "[IGT] gem_exec_whisper: starting subtest basic-fds-all",
    "i915 0000:00:02.0: [drm:intel_dp_start_link_train [i915]] [ENCODER:94:DDI A/PHY A] Link Training passed at link rate = 270000, lane count = 4",
    "PM: suspend entry (deep)",
    "Filesystems sync: 0.002 seconds",
    "Freezing user space processes completed (elapsed 0.001 seconds)",
    "ACPI: PM: Waking up from system sleep state S3",
    "PM: suspend exit",
    "perf: interrupt took too long (2501 > 2500), lowering kernel.perf_event_max_sample_rate to 79800",
]


def console_text(size, seed, boots=True):
    """
    About @size bytes of a machine's serial console: kernel and IGT lines, a boot (the
    firmware's reset, the kernel's first line) every 300 KB when @boots.
    """
    rng = random.Random(seed)
    out, clock, job, boot_bytes = [], 0.0, 0, 0 if boots else 1
    total = 0
    while total < size:
        if boots and (boot_bytes == 0 or boot_bytes > 300000):
            chunk = (FIRMWARE + b"iPXE 1.21.1 -- Open Source Network Boot Firmware\r\n"
                     b"[    0.000000] Linux version 6.12.9-amd64 (debian-kernel@lists.debian.org) "
                     b"(x86_64-linux-gnu-gcc-14 (Debian 14.2.0-12) 14.2.0) #1 SMP PREEMPT_DYNAMIC\r\n")
            clock, boot_bytes = 0.0, 0
        else:
            clock += rng.random() * 0.05
            stamp = "[%5d.%06d] " % (int(clock), int(clock * 1e6) % 1000000)
            k = rng.random()
            if k < 0.03:
                job += 1
                line = stamp + "[bootci] [%d/3400] igt@kms_flip@flip-vs-panning-%d" % (job % 3400 + 1, job)
            elif k < 0.06:
                line = stamp + "bootci: [%d/3400] igt@kms_flip@flip-vs-panning-%d pass 1.2s (elapsed 3m02s, ETA 41m)" % (
                    job % 3400 + 1, job)
            else:
                line = stamp + rng.choice(LINES)
            chunk = (line + "\r\n").encode()
        out.append(chunk)
        total += len(chunk)
        boot_bytes += len(chunk)
    return b"".join(out)


def cmd_feed(a):
    sel = selectors.DefaultSelector()
    n = a.machines + 1
    listeners, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        s.setblocking(False)
        listeners.append(s)
        ports.append(s.getsockname()[1])
        sel.register(s, selectors.EVENT_READ, ("listen", len(listeners) - 1))
    with open(a.ports + ".tmp", "w") as f:
        f.write("\n".join(map(str, ports)) + "\n")
    os.rename(a.ports + ".tmp", a.ports)
    texts = [console_text(1 << 20, k) for k in range(8)]
    # A flood is one boot that does not stop talking (a warning in a loop): no reset in it.
    flood_text = console_text(4 << 20, 99, boots=False)
    conns = {}  # index: [socket, offset, text]
    sent = [0] * n
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    next_tick = time.monotonic()
    next_report = next_tick + 1
    while not stop:
        now = time.monotonic()
        flooding = os.path.exists(a.flood_flag)
        timeout = max(0.0, next_tick - now)
        for key, events in sel.select(0 if flooding else timeout):
            kind, i = key.data
            if kind == "listen":
                try:
                    c, _ = key.fileobj.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                if i in conns:
                    conns[i][0].close()
                conns[i] = [c, 0, flood_text if i == n - 1 else texts[i % len(texts)], time.monotonic()]
        now = time.monotonic()
        if flooding and n - 1 in conns:
            c, at, text, _ = conns[n - 1]
            try:
                for _ in range(16):
                    k = c.send(text[at:at + 65536] if at + 65536 <= len(text) else text[at:] + text[:65536 - (len(text) - at)])
                    sent[n - 1] += k
                    at = (at + k) % len(text)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                del conns[n - 1]
            else:
                pass
            if n - 1 in conns:
                conns[n - 1][1] = at
        if now >= next_tick:
            # Every paced console gets what its line carried since its last turn (a late turn
            # sends more); bytes the socket cannot take are lost, as a UART's are.
            for i, conn in list(conns.items()):
                if i == n - 1:
                    continue
                c, at, text, last = conn
                burst = int(BAUD_BYTES * (now - last))
                if burst <= 0:
                    continue
                conn[3] = last + burst / BAUD_BYTES
                piece = text[at:at + burst]
                if len(piece) < burst:
                    piece += text[:burst - len(piece)]
                try:
                    k = c.send(piece)
                except (BlockingIOError, InterruptedError):
                    k = 0
                except OSError:
                    del conns[i]
                    continue
                sent[i] += k
                conn[1] = (at + burst) % len(text)
            next_tick += TICK
            if next_tick < now:
                next_tick = now + TICK
        if now >= next_report:
            with open(a.sent + ".tmp", "w") as f:
                json.dump(sent, f)
            os.rename(a.sent + ".tmp", a.sent)
            next_report = now + 1
    with open(a.sent + ".tmp", "w") as f:
        json.dump(sent, f)
    os.rename(a.sent + ".tmp", a.sent)
    return 0


def load_serve_tool():
    spec = importlib.util.spec_from_file_location(
        "serve_tool", os.path.join(HERE, "..", "aggregator", "serve-tool.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_written(pid):
    """Bytes serve sent to storage: written, less what was truncated or unlinked before writeback."""
    fields = {}
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            key, value = line.split(":")
            fields[key] = int(value)
    return fields.get("write_bytes", 0) - fields.get("cancelled_write_bytes", 0)


def sent_now(path, count):
    """The feeder's bytes sent per console, and when it counted them."""
    try:
        with open(path) as f:
            return json.load(f), os.stat(path).st_mtime
    except (FileNotFoundError, ValueError):
        return [0] * count, time.time()


def tree_bytes(path):
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                pass
    return total


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def inventory(path, machines, ports, consoles):
    text = []
    for i in range(machines + 1):
        text.append("[machine m%02d]\nmac = 52:54:00:00:%02x:%02x\n" % (i, i // 256, i % 256))
        if consoles:
            text.append("console = tcp:127.0.0.1:%d\n" % ports[i])
    with open(path + ".tmp", "w") as f:
        f.write("".join(text))
    os.rename(path + ".tmp", path)


def cmd_run(a):
    tool = load_serve_tool()
    work, data = a.work, os.path.join(a.work, "data")
    os.makedirs(data, exist_ok=True)
    n = a.machines
    ports_file, flood_flag, sent_file = (os.path.join(work, x) for x in ("ports", "flood", "sent.json"))
    feeder = subprocess.Popen([sys.executable, os.path.abspath(__file__), "feed", ports_file, flood_flag,
                               sent_file, "--machines", str(n)])
    serve = None
    try:
        for _ in range(200):
            if os.path.exists(ports_file):
                break
            time.sleep(0.05)
        ports = [int(x) for x in open(ports_file).read().split()]
        token = "bench-upload-token"
        with open(os.path.join(work, "tokens"), "w") as f:
            f.write("uploader sha256:%s\n" % tool.sha256_hex(token.encode()))
        inventory(os.path.join(data, "machines.conf"), n, ports, False)
        env = dict(os.environ)
        if "BENCH_SERVE_TUNABLES" in os.environ:
            env["GLIBC_TUNABLES"] = os.environ["BENCH_SERVE_TUNABLES"]
        port_file = os.path.join(work, "port")
        serve = subprocess.Popen([a.aggregator, "serve", "--data", data, "--listen", "127.0.0.1:0",
                                  "--tokens", os.path.join(work, "tokens"), "--port-file", port_file],
                                 env=env, stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(work, "server.log"), "w"))
        for _ in range(100):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        port = int(open(port_file).read())
        base = "http://127.0.0.1:%d" % port

        # The uploads: small real runs (the piglit scenario's files and 32 KiB of noise), made beforehand.
        run_dir = os.path.join(HERE, "..", "resultgen", "scenarios", "piglit-style-default-level")
        uploads_per_phase = int(a.seconds * 4) + 8
        kinds = [("off", False, False), ("on", True, False), ("flood", True, True)]
        archives = []
        for k in range(a.rounds * len(kinds) * uploads_per_phase):
            files = tool.read_dir(run_dir)
            files["noise.bin"] = os.urandom(32 * 1024)
            run = "bench-%04d" % k
            blob = tool.zstd(tool.build_tar("uploader", run, files))
            archives.append((run, blob, tool.sha256_hex(blob)))

        # Rounds of the three phases in turn: the host's drift over the run falls on all three.
        phases = [kind for _ in range(a.rounds) for kind in kinds]
        results = []
        next_upload = 0
        for name, consoles, flood in phases:
            inventory(os.path.join(data, "machines.conf"), n, ports, consoles)
            if flood:
                open(flood_flag, "w").close()
            elif os.path.exists(flood_flag):
                os.unlink(flood_flag)
            time.sleep(3)  # serve re-reads the inventory within a second and connects
            boot_lat, upload_lat, failures = [], [], []
            stop = threading.Event()

            def boots():
                rng = random.Random(1)
                while not stop.is_set():
                    i = rng.randrange(n + 1)
                    mac = "52:54:00:00:%02x:%02x" % (i // 256, i % 256)
                    t = time.monotonic()
                    try:
                        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                        c.request("GET", "/api/v1/boot/" + mac)
                        r = c.getresponse()
                        r.read()
                        c.close()
                        if r.status != 200:
                            failures.append("boot %s: %d" % (mac, r.status))
                    except OSError as e:
                        failures.append("boot: %s" % e)
                    boot_lat.append(time.monotonic() - t)
                    stop.wait(max(0.0, 0.05 - (time.monotonic() - t)))

            def uploads(batch):
                for run, blob, sha in batch:
                    if stop.is_set():
                        return
                    t = time.monotonic()
                    status, text = tool.put("%s/api/v1/machines/uploader/runs/%s" % (base, run), blob,
                                            token, sha)
                    upload_lat.append(time.monotonic() - t)
                    if status != 201:
                        failures.append("upload %s: %s %s" % (run, status, text[:200]))
                    stop.wait(max(0.0, 0.25 - (time.monotonic() - t)))

            batch = archives[next_upload:next_upload + uploads_per_phase]
            next_upload += uploads_per_phase
            sent0, sent0_at = sent_now(sent_file, n + 1)
            feed0 = proc_cpu(feeder.pid)
            cpu0, wrote0, kept0 = proc_cpu(serve.pid), proc_written(serve.pid), tree_bytes(os.path.join(data, "consoles"))
            t0 = time.monotonic()
            threads = [threading.Thread(target=boots), threading.Thread(target=uploads, args=(batch,))]
            for t in threads:
                t.start()
            time.sleep(a.seconds)
            stop.set()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - t0
            feed1 = proc_cpu(feeder.pid)
            cpu1, wrote1, kept1 = proc_cpu(serve.pid), proc_written(serve.pid), tree_bytes(os.path.join(data, "consoles"))
            time.sleep(1.1)
            sent1, sent1_at = sent_now(sent_file, n + 1)
            results.append({
                "name": name, "seconds": elapsed,
                "boot": boot_lat, "upload": upload_lat, "failures": failures,
                "cpu": cpu1 - cpu0, "written": wrote1 - wrote0, "kept": kept1 - kept0, "feeder": feed1 - feed0,
                "paced_rate": (sum(sent1[:n]) - sum(sent0[:n])) / max(1e-3, sent1_at - sent0_at),
                "flood_rate": (sent1[n] - sent0[n]) / max(1e-3, sent1_at - sent0_at),
            })
        if os.path.exists(flood_flag):
            os.unlink(flood_flag)
        flood_dir = os.path.join(data, "consoles", "m%02d" % n)
        flood_boot = max((os.lstat(os.path.join(flood_dir, f)).st_size for f in os.listdir(flood_dir)
                          if f.endswith(".log")), default=0) if os.path.isdir(flood_dir) else 0
    finally:
        if serve:
            serve.terminate()
            serve.wait()
        feeder.terminate()
        feeder.wait()

    def merged(kind):
        rs = [r for r in results if r["name"] == kind]
        m = {k: sum(r[k] for r in rs) for k in ("seconds", "cpu", "written", "kept", "feeder")}
        m.update({k: [x for r in rs for x in r[k]] for k in ("boot", "upload", "failures")})
        m.update({k: sum(r[k] for r in rs) / len(rs) for k in ("paced_rate", "flood_rate")})
        return m

    names = {"off": "off (the peer)", "on": "on: %d consoles at 115200 baud" % n,
             "flood": "on, and 1 flooding"}
    print("%d rounds of %.0f s a phase, %d machines" % (a.rounds, a.seconds, n))
    print("%-34s %8s %8s %8s %8s %8s %8s %10s %9s %6s %7s" % (
        "phase", "boot p50", "p99", "upl p50", "p99", "answers", "CPU s/s", "written/s", "kept/s",
        "fails", "feeder"))
    m = {kind: merged(kind) for kind, _, _ in kinds}
    for kind, _, _ in kinds:
        r = m[kind]
        print("%-34s %6.1fms %6.1fms %6.1fms %6.1fms %8s %8.3f %8.2fMB %7.2fMB %6d %7.3f" % (
            names[kind], 1e3 * percentile(r["boot"], 50), 1e3 * percentile(r["boot"], 99),
            1e3 * percentile(r["upload"], 50), 1e3 * percentile(r["upload"], 99),
            "%d/%d" % (len(r["boot"]), len(r["upload"])), r["cpu"] / r["seconds"],
            r["written"] / 1e6 / r["seconds"], r["kept"] / 1e6 / r["seconds"], len(r["failures"]),
            r["feeder"] / r["seconds"]))
    off, on, flood = m["off"], m["on"], m["flood"]

    def ratios(r):
        return "boot p50 x%.2f, p99 x%.2f; upload p50 x%.2f, p99 x%.2f" % tuple(
            percentile(r[k], p) / percentile(off[k], p) for k in ("boot", "upload") for p in (50, 99))

    print("consoles on / off (the peer, this run): " + ratios(on))
    print("with the flood / off: " + ratios(flood))
    machine_hours = n * on["seconds"] / 3600
    print("per machine-hour of console at 115200 baud (%.2f KB/s read each): %.2f CPU s, %.1f MB kept, "
          "%.1f MB written to storage" % (
              on["paced_rate"] / n / 1e3,
              (on["cpu"] - off["cpu"] / off["seconds"] * on["seconds"]) / machine_hours,
              on["kept"] / 1e6 / machine_hours,
              (on["written"] - off["written"] / off["seconds"] * on["seconds"]) / 1e6 / machine_hours))
    flood_hours = flood["seconds"] / 3600
    print("the flooding console: %.1f MB/s read; per hour of flood %.0f CPU s, %.0f MB written to "
          "storage; its boot's file %.1f MB (the limit: 16 MiB and serve's notes)" % (
              flood["flood_rate"] / 1e6,
              (flood["cpu"] - on["cpu"] / on["seconds"] * flood["seconds"]) / flood_hours,
              (flood["written"] - on["written"] / on["seconds"] * flood["seconds"]) / 1e6 / flood_hours,
              flood_boot / 1e6))
    bad = [f for r in results for f in r["failures"]]
    for f in bad[:10]:
        print("failure:", f, file=sys.stderr)
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    x = sub.add_parser("run")
    x.add_argument("aggregator")
    x.add_argument("work")
    x.add_argument("--machines", type=int, default=40)
    x.add_argument("--seconds", type=float, default=10)
    x.add_argument("--rounds", type=int, default=3)
    x = sub.add_parser("feed")
    x.add_argument("ports")
    x.add_argument("flood_flag")
    x.add_argument("sent")
    x.add_argument("--machines", type=int, default=40)
    a = p.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_feed(a)


if __name__ == "__main__":
    sys.exit(main())
