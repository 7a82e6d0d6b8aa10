#!/usr/bin/python3
# A machine's serial line for tests/aggregator/console.t: a TCP server on
# 127.0.0.1:PORT, or [ADDRESS]:PORT (what QEMU's `-chardev socket,server=on` is to ser2net) that
# sends, to whoever is connected, each file DIR/send.* in name order and
# renames it sent.* once sent whole. A file whose sending fails (the reader went
# away) is sent again to the next connection, from its start.
import os
import select
import socket
import sys
import time

port, folder = int(sys.argv[1]), sys.argv[2]
address = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"  # or ::1
server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((address, port))
server.listen(4)
open(os.path.join(folder, "listening"), "w").close()
while True:
    connection, _ = server.accept()
    with open(os.path.join(folder, "connections"), "a") as log:
        log.write("connected\n")
    try:
        while True:
            # A reader that went away is noticed before anything is sent to it.
            readable, _, _ = select.select([connection], [], [], 0)
            if readable and not connection.recv(4096, socket.MSG_PEEK):
                raise OSError("closed")
            if readable:
                connection.recv(4096)
            names = sorted(n for n in os.listdir(folder) if n.startswith("send."))
            if not names:
                time.sleep(0.05)
                continue
            path = os.path.join(folder, names[0])
            with open(path, "rb") as f:
                connection.sendall(f.read())
            os.rename(path, os.path.join(folder, "sent." + names[0][5:]))
    except OSError:
        connection.close()
