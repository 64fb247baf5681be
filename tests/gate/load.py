#!/usr/bin/env python3
"""A bounded load on ringkv for the allocation gate's tests: CONNECTIONS connections one after
the other, each CYCLES rounds of SET, GET and DEL of its own key with a 100-byte value, every
request answered before the next is sent (queues at depth one). Prints the requests sent.
usage: load.py PORT CONNECTIONS CYCLES"""
import socket
import sys


def reply(sock, buf):
    """Reads one RESP reply (status, error, integer or bulk); returns the rest of buf."""
    while True:
        if b"\r\n" in buf:
            line, rest = buf.split(b"\r\n", 1)
            if line[:1] != b"$" or int(line[1:]) < 0:
                return rest
            need = int(line[1:]) + 2
            if len(rest) >= need:
                return rest[need:]
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("ringkv closed the connection")
        buf += chunk


def command(*words):
    out = b"*%d\r\n" % len(words)
    for w in words:
        out += b"$%d\r\n%s\r\n" % (len(w), w)
    return out


def main():
    port, connections, cycles = (int(a) for a in sys.argv[1:4])
    value = b"v" * 100
    sent = 0
    for c in range(connections):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            buf = b""
            for i in range(cycles):
                key = b"key:%04d:%06d" % (c, i)  # one length: the same bytes per request
                for request in (command(b"SET", key, value), command(b"GET", key),
                                command(b"DEL", key)):
                    sock.sendall(request)
                    buf = reply(sock, buf)
                    sent += 1
    print(sent)


main()
