"""QEMU virt: the command line (scripts/qemu.sh picks the machine, the firmware and the TCG
threads), its version, and a run in the background with user networking (Qemu: the network
system's tests and benchmarks)."""
import os
import re
import socket
import subprocess
import time

from . import Fail
from .hostnet import free_port

QEMU_SH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "qemu.sh")


def command(image, extra=()):
    """Boot `image` under QEMU virt (SMP, FIRMWARE, TCG from the environment: qemu.sh)."""
    return [QEMU_SH, image] + list(extra)


def version():
    """QEMU's version as it states it, e.g. "7.2.11 (Debian 1:7.2+dfsg-7+deb12u7)"."""
    out = subprocess.run(["qemu-system-riscv64", "--version"], capture_output=True, text=True).stdout
    return out.split("\n")[0].split("version ")[-1]


def user_net(host_port, guest_port, netdev="n0"):
    """User-mode networking with the host's 127.0.0.1:host_port forwarded to the guest's guest_port."""
    return ["-netdev", f"user,id={netdev},hostfwd=tcp:127.0.0.1:{host_port}-:{guest_port}"]


# event_idx=off: virtio-drivers compares the 16-bit avail_event without wrap-around (the
# Makefile's NET_QEMU_ARGS says more).
VIRTIO_NET = "virtio-net-device,netdev={},event_idx=off"


class Qemu:
    """One QEMU run of `image` in the background, its console in `log_path`, a free host port
    (host_port) forwarded to the guest's guest_port."""

    def __init__(self, image, guest_port, log_path, inject=True, extra=()):
        """`inject`: also a dgram netdev on the NIC's hub, for raw frames (`frame`); `extra`: more
        QEMU arguments."""
        self.host_port = free_port()
        self.qemu_dgram = free_port(socket.SOCK_DGRAM)
        self.inject = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.inject.bind(("127.0.0.1", 0))
        mine = self.inject.getsockname()[1]
        user = user_net(self.host_port, guest_port)
        if inject:
            net = user + [
                "-netdev", f"dgram,id=g0,local.type=inet,local.host=127.0.0.1,local.port={self.qemu_dgram},"
                           f"remote.type=inet,remote.host=127.0.0.1,remote.port={mine}",
                "-netdev", "hubport,id=hp0,hubid=0",
                "-netdev", "hubport,id=hp1,hubid=0,netdev=n0",
                "-netdev", "hubport,id=hp2,hubid=0,netdev=g0",
                "-device", VIRTIO_NET.format("hp0"),
            ]
        else:
            net = user + ["-device", VIRTIO_NET.format("n0")]
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(command(image, net + list(extra)), stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=dict(os.environ, SMP=os.environ.get("SMP", "4")))

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_for(self, pattern, timeout):
        t0 = time.time()
        while time.time() - t0 < timeout:
            m = re.search(pattern, self.text())
            if m:
                return m
            if self.proc.poll() is not None:
                raise Fail(f"QEMU exited ({self.proc.returncode}) before '{pattern}'")
            time.sleep(1)
        raise Fail(f"no '{pattern}' within {timeout} s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
        self.inject.close()

    def frame(self, data):
        """Send one raw Ethernet frame into the NIC's hub (needs `inject`)."""
        self.inject.sendto(data, ("127.0.0.1", self.qemu_dgram))
