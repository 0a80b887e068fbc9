#!/usr/bin/env python3
"""End-to-end test of the network system (sw/apps/net-system) under QEMU, used by `make test-net`.

For each variant given (`--image async=... --image sync=...`: the servers over async IPC, or over
sync IPC with a TCP server thread per connection), boots its image on 4 harts with user-mode networking (a free host port forwarded to the TCP
server's) and a second way in for raw Ethernet frames (a dgram netdev on the same QEMU hub), waits
for the TCP server to listen, then from the host:

  0. a keeper connection is opened and answered once; it stays idle through everything below
     and must be answered again at the end (nothing acknowledged is lost);
  1. exchange: the load client (tools/loadgen) runs a fixed count over several connections;
     every reply is checked byte by byte and the count must match;
  2. truncated request: part of a request, then end of stream: no reply, the server closes;
  3. vanished client: part of a request, then a reset;
  4. oversized request: a request and a half: one reply, then the rest completes a second;
  5. garbage frames: random bytes, and malformed Ethernet/ARP/IPv4/TCP frames addressed to the
     server, through the dgram netdev;
  5b. a bounded SYN flood from an address that never completes a handshake (through the dgram
     netdev): every socket ends up half-open; once they are older than the server's limit, a
     real client is served again (and case 6 finds every socket free);
  6. more connections than sockets: as many as the server has are served, the extra ones are
     refused (reset or closed without a reply); after they all close, new ones are served;
  7. the exchange again: nothing of the above broke the server; the keeper is answered.

Any failure prints the reason and the tail of the QEMU log and exits 1.
"""
import argparse
import os
import random
import re
import socket
import struct
import subprocess
import sys
import time

from uintr import Fail
from uintr.hostnet import loadgen
from uintr.qemu import Qemu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUEST_IP = bytes([10, 0, 2, 15])
GATEWAY_IP = bytes([10, 0, 2, 2])
GUEST_MAC = bytes.fromhex("525400123456")


def exchange(binary, port, size, timeout, what):
    res = loadgen(binary, port, 4, 200, size, timeout)
    if res["requests"] != 200 or res["errors"] != 0:
        raise Fail(f"{what}: {res['requests']} of 200 requests answered correctly, {res['errors']} dead connections")
    print(f"  {what}: 200 requests over 4 connections answered correctly "
          f"({res['requests_per_s']:.0f} requests/s, p99 {res['p99_us']} us)")


def connect(port, timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_n(s, n):
    """n bytes, or fewer if the stream ends (or is reset) first."""
    got = b""
    while len(got) < n:
        try:
            c = s.recv(n - len(got))
        except (ConnectionResetError, ConnectionAbortedError):
            break
        if not c:
            break
        got += c
    return got


def request(seed, size):
    return bytes((seed * 31 + i) % 256 for i in range(size))


def plus_one(b):
    return bytes((x + 1) % 256 for x in b)


def one_request(port, size, timeout, seed):
    s = connect(port, timeout)
    q = request(seed, size)
    s.sendall(q)
    r = read_n(s, size)
    s.close()
    return r == plus_one(q)


def truncated(port, size, timeout):
    s = connect(port, timeout)
    s.sendall(request(1, size)[: max(1, size // 4)] if size > 1 else b"")
    s.shutdown(socket.SHUT_WR)
    r = read_n(s, size)
    s.close()
    if r:
        raise Fail(f"truncated request: got {len(r)} reply bytes for a request cut short")
    print("  truncated request: no reply, the server ended the connection")


def vanished(port, size, timeout):
    for k in range(3):
        s = connect(port, timeout)
        s.sendall(request(2 + k, size)[: max(1, size // 2)])
        time.sleep(0.2)
        # Linger 0: close sends a reset, the client is gone mid-request.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    if not one_request(port, size, timeout, 7):
        raise Fail("vanished clients: the next client was not served")
    print("  vanished clients (3 resets mid-request): the next client is served")


def oversized(port, size, timeout):
    s = connect(port, timeout)
    stream = request(3, size) + request(4, size)
    first = stream[: size + size // 2]
    s.sendall(first)
    r1 = read_n(s, size)
    if r1 != plus_one(stream[:size]):
        raise Fail("oversized request: the first reply is wrong or missing")
    s.sendall(stream[len(first):])
    r2 = read_n(s, size)
    s.close()
    if r2 != plus_one(stream[size:]):
        raise Fail("oversized request: the rest did not complete a second request")
    print("  oversized request (1.5 requests, then the rest): two correct replies")


def ipv4(src, dst, proto, payload, bad_checksum=False, ihl=5, total=None):
    total = 20 + len(payload) if total is None else total
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 1, 0, 64, proto, 0, src, dst)
    c = checksum(h)
    if bad_checksum:
        c ^= 0x5555
    return h[:10] + struct.pack("!H", c) + h[12:] + payload


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def tcp(sport, dport, flags, payload=b"", offset=5, seq=1, ack=0):
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, offset << 4, flags, 1024, 0, 0) + payload


def ether(payload, ethertype=0x0800, dst=GUEST_MAC, src=bytes.fromhex("5254000000aa")):
    return dst + src + struct.pack("!H", ethertype) + payload


def tcp_checksummed(src, dst, sport, dport, flags, seq):
    t = tcp(sport, dport, flags, seq=seq)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(t))
    c = checksum(pseudo + t)
    return t[:16] + struct.pack("!H", c) + t[18:]


def syn_flood(q, port, size, timeout, count=400):
    fake = bytes([10, 0, 2, 77])
    for k in range(count):
        seg = tcp_checksummed(fake, GUEST_IP, 20000 + k, 5555, 0x02, seq=k * 1000)
        q.frame(ether(ipv4(fake, GUEST_IP, 6, seg)))
    # The server drops half-open connections older than 3 s (net-server stack::HALF_OPEN_US).
    time.sleep(5)
    t0 = time.time()
    while not one_request(port, size, timeout, 13):
        if time.time() - t0 > 30:
            raise Fail("SYN flood: no client served after the half-open connections expired")
        time.sleep(1)
    m = re.findall(r"dropped \d+ half-open connections \((\d+) so far\)", q.text())
    if not m or int(m[-1]) < 100:
        raise Fail(f"SYN flood: the server reports {m[-1] if m else 'no'} half-open connections dropped (expected most of its sockets)")
    print(f"  SYN flood: {count} SYNs that never complete took the sockets; {m[-1]} half-open connections "
          f"dropped after their limit, then a client is served")


def garbage(q, port, size, timeout):
    rnd = random.Random(19)
    frames = []
    for _ in range(300):
        frames.append(bytes(rnd.getrandbits(8) for _ in range(rnd.choice([1, 13, 14, 15, 60, 200, 1514]))))
    fake = bytes([10, 0, 2, 77])
    for _ in range(40):
        frames += [
            ether(b"\x45"),                                                  # IPv4, truncated header
            ether(ipv4(fake, GUEST_IP, 6, tcp(4000, 5555, 0x02), bad_checksum=True)),
            ether(ipv4(fake, GUEST_IP, 6, tcp(4000, 5555, 0x02), ihl=3)),       # IHL below 5
            ether(ipv4(fake, GUEST_IP, 6, tcp(4000, 5555, 0x02), total=1400)),  # length past the frame
            ether(ipv4(fake, GUEST_IP, 6, tcp(4001, 5555, 0x3F, b"x" * 20))),   # every flag, bad TCP checksum
            ether(ipv4(fake, GUEST_IP, 6, tcp(4002, 5555, 0x10, offset=15))),   # data offset past the segment
            ether(ipv4(fake, GUEST_IP, 6, b"\x00" * 7)),                      # TCP header cut short
            ether(ipv4(fake, GUEST_IP, 17, b"\x01" * 3)),                     # UDP cut short
            ether(b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\xff" * 5, 0x0806),  # ARP cut short
            ether(bytes(rnd.getrandbits(8) for _ in range(100)), 0x86DD),      # IPv6 (not spoken)
            ether(b"\x00" * 46, 0x88B5),                                      # unknown ethertype
            ether(b"\x00" * 9000),                                            # jumbo: over the MTU
        ]
    for f in frames:
        q.frame(f)
    time.sleep(2)
    if not one_request(port, size, timeout, 9):
        raise Fail("garbage frames: the next client was not served")
    print(f"  garbage frames: {len(frames)} sent through the dgram netdev, the next client is served")


def keeper_open(port, size, timeout):
    s = connect(port, timeout)
    q = request(200, size)
    s.sendall(q)
    if read_n(s, size) != plus_one(q):
        raise Fail("keeper connection: no correct first reply")
    return s


def keeper_check(s, size):
    q = request(201, size)
    s.sendall(q)
    r = read_n(s, size)
    s.close()
    if r != plus_one(q):
        raise Fail("keeper connection: the connection open through every case was not answered again")
    print("  keeper connection: open and idle through every case, answered again")


def exhaustion(port, size, timeout, sockets):
    extra = 4
    conns, served, refused = [], 0, 0
    try:
        for k in range(sockets + extra):
            s = connect(port, timeout)
            conns.append(s)
            q = request(100 + k, size)
            try:
                s.sendall(q)
            except (BrokenPipeError, ConnectionResetError):
                refused += 1
                continue
            r = read_n(s, size)
            if r == plus_one(q):
                served += 1
            elif not r:
                refused += 1
            else:
                raise Fail(f"more connections than sockets: connection {k} got a wrong reply")
    finally:
        for s in conns:
            s.close()
    if served != sockets or refused != extra:
        raise Fail(f"more connections than sockets: {served} served (expected {sockets}), {refused} refused (expected {extra})")
    # The closes travel to the server; then new connections must find free sockets.
    t0 = time.time()
    while not one_request(port, size, timeout, 11):
        if time.time() - t0 > 60:
            raise Fail("more connections than sockets: no connection served after the others closed")
        time.sleep(2)
    print(f"  more connections than sockets: {served} held and served, {refused} refused, then new ones served")


def run(variant, image, a):
    q = Qemu(image, a.guest_port, f"{a.log}-{variant}.log")
    t0 = time.time()
    try:
        q.wait_for(r"\[tcp-server\].*listening", a.boot_timeout)
        m = re.search(r"(\d+) sockets", q.text())
        if not m:
            raise Fail("the net server did not say how many sockets it has")
        sockets = int(m.group(1))
        if not re.search(rf"\[tcp-server\] {variant}\b", q.text()):
            raise Fail(f"the TCP server does not say it is the {variant} variant")
        print(f"net test ({variant}): booted in {time.time() - t0:.0f} s, host port {q.host_port} -> guest {a.guest_port}")
        keeper = keeper_open(q.host_port, a.size, a.timeout)
        exchange(a.loadgen, q.host_port, a.size, a.timeout, "exchange")
        truncated(q.host_port, a.size, a.timeout)
        vanished(q.host_port, a.size, a.timeout)
        oversized(q.host_port, a.size, a.timeout)
        garbage(q, q.host_port, a.size, a.timeout)
        syn_flood(q, q.host_port, a.size, a.timeout)
        # The keeper holds one socket.
        exhaustion(q.host_port, a.size, a.timeout, sockets - 1)
        exchange(a.loadgen, q.host_port, a.size, a.timeout, "exchange after all that")
        keeper_check(keeper, a.size)
        bad = re.search(r"\[(net-server|tcp-server|net-root)\][^\n]*(panic|stopped|FAILED|faulted)[^\n]*", q.text())
        if bad:
            raise Fail(f"the system reported: {bad.group(0)}")
    except (Fail, OSError, subprocess.TimeoutExpired) as e:
        print(f"net test ({variant}): FAILED: {e}")
        print("--- QEMU log (tail) ---")
        print(q.text()[-3000:])
        q.stop()
        sys.exit(1)
    q.stop()
    print(f"net test ({variant}): passed in {time.time() - t0:.0f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", action="append", required=True, help="VARIANT=IMAGE (async, sync), repeatable")
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--guest-port", type=int, default=5555)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--log", default=os.path.join(ROOT, "build", "net-test"), help="log path prefix")
    ap.add_argument("--boot-timeout", type=int, default=600)
    ap.add_argument("--timeout", type=int, default=60, help="seconds a single request may take")
    a = ap.parse_args()
    for v in a.image:
        variant, _, image = v.partition("=")
        if variant not in ("async", "sync") or not image:
            sys.exit(f"net test: --image {v}: expected async=PATH or sync=PATH")
        run(variant, image, a)

if __name__ == "__main__":
    main()
