"""deps.sh on a machine without Rust: rustup-init's download, where its binaries land, and the
pinned toolchain installed once, with its targets and components.

No network: the download is a file:// URL to an installer that does what rustup-init does with
its paths and arguments (binaries into $CARGO_HOME/bin, toolchains under $RUSTUP_HOME) and logs
every call, so the test sees exactly what deps.sh asked for.
"""
import os
import platform
import re
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DEPS = os.path.join(HERE, "deps.sh")
with open(os.path.join(HERE, "..", "rust-toolchain.toml")) as f:
    PINNED = re.search(r'^channel *= *"(.*)"', f.read(), re.M).group(1)
TARGETS = {"riscv64imac-unknown-none-elf", "riscv64gc-unknown-none-elf"}
HOST = "x86_64-unknown-linux-gnu"

# rustup (installed by the installer below): the sub-commands deps.sh uses, state in $RUSTUP_HOME.
FAKE_RUSTUP = r'''#!/usr/bin/env python3
import os, sys
home = os.environ.get("RUSTUP_HOME") or os.path.join(os.environ["HOME"], ".rustup")
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write("rustup " + " ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
tc_dir = lambda tc: os.path.join(home, "toolchains", tc + "-HOST")
def items(tc, kind):
    p = os.path.join(tc_dir(tc), kind)
    return open(p).read().split() if os.path.exists(p) else []
def add(tc, kind, names):
    os.makedirs(tc_dir(tc), exist_ok=True)
    text = "\n".join(sorted(set(items(tc, kind)) | set(names))) + "\n"
    with open(os.path.join(tc_dir(tc), kind), "w") as f:
        f.write(text)
def install(tc, comps):
    add(tc, "components", ["rustc", "cargo", "rust-std"] + comps)
    add(tc, "targets", ["HOST"])
if args[0].startswith("+"):
    tc, args = args[0][1:], args[1:]
    if not os.path.isdir(tc_dir(tc)):
        sys.exit("error: toolchain '%s' is not installed" % tc)
    if args[:3] == ["target", "list", "--installed"]:
        print("\n".join(items(tc, "targets")))
    elif args[:2] == ["target", "add"]:
        add(tc, "targets", args[2:])
    elif args[:3] == ["component", "list", "--installed"]:
        print("\n".join(c + "-HOST" for c in items(tc, "components")))
    elif args[:2] == ["component", "add"]:
        add(tc, "components", args[2:])
    else:
        sys.exit("fake rustup: unknown command %s" % args)
elif args[:2] == ["toolchain", "list"]:
    d = os.path.join(home, "toolchains")
    print("\n".join(sorted(os.listdir(d))) if os.path.isdir(d) else "no installed toolchains")
elif args[:2] == ["toolchain", "install"]:
    comps = args[args.index("--component") + 1].split(",") if "--component" in args else []
    install(args[2], comps)
else:
    sys.exit("fake rustup: unknown command %s" % args)
'''.replace("HOST", HOST)

# rustup-init: honours CARGO_HOME and RUSTUP_HOME as the real one does.
FAKE_INIT = r'''#!/usr/bin/env python3
import os, shutil, subprocess, sys
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write("rustup-init " + " ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
opt = lambda name, default: args[args.index(name) + 1] if name in args else default
assert "-y" in args, "would prompt"
cargo_home = os.environ.get("CARGO_HOME") or os.path.join(os.environ["HOME"], ".cargo")
os.makedirs(os.path.join(cargo_home, "bin"), exist_ok=True)
rustup = os.path.join(cargo_home, "bin", "rustup")
shutil.copy(os.environ["FAKE_RUSTUP"], rustup)
os.chmod(rustup, 0o755)
tc = opt("--default-toolchain", "stable")
if tc != "none":
    env = dict(os.environ, PATH=os.path.join(cargo_home, "bin") + os.pathsep + os.environ["PATH"])
    comps = opt("--component", "")
    subprocess.check_call([rustup, "toolchain", "install", tc] + (["--component", comps] if comps else []), env=env)
    for t in filter(None, opt("--target", "").split(",")):
        subprocess.check_call([rustup, "+" + tc, "target", "add", t], env=env)
'''

# What deps.sh's Rust phase runs besides rustup: a PATH of these only, so no Rust of this machine leaks in.
TOOLS = ["bash", "env", "python3", "curl", "sed", "grep", "mktemp", "uname", "chmod", "rm", "cat", "dirname"]


class BareMachineTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="deps-test-")
        self.home = os.path.join(self.tmp, "home")
        # As the Makefile exports it: the crate cache, not where rustup's binaries belong.
        self.cargo_cache = os.path.join(self.tmp, "cache", "cargo")
        self.bin = os.path.join(self.tmp, "sysbin")
        for d in (self.home, self.bin):
            os.makedirs(d)
        for t in TOOLS:
            os.symlink(shutil.which(t), os.path.join(self.bin, t))
        self.log = os.path.join(self.tmp, "calls.log")
        self.init = os.path.join(self.tmp, "dist", "rustup-init")
        os.makedirs(os.path.dirname(self.init))
        for path, text in ((self.init, FAKE_INIT), (os.path.join(self.tmp, "rustup.py"), FAKE_RUSTUP)):
            with open(path, "w") as f:
                f.write(text)
        # The download is what gets executable, not the served file.
        os.chmod(self.init, 0o644)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def deps(self, *args, url=None):
        env = {
            "HOME": self.home,
            "CARGO_HOME": self.cargo_cache,
            "PATH": self.bin,
            "FAKE_LOG": self.log,
            "FAKE_RUSTUP": os.path.join(self.tmp, "rustup.py"),
            "RUSTUP_INIT_URL": url or "file://" + self.init,
        }
        return subprocess.run([DEPS, *args], env=env, capture_output=True, text=True, timeout=60)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def toolchain(self, kind):
        with open(os.path.join(self.home, ".rustup", "toolchains", f"{PINNED}-{HOST}", kind)) as f:
            return set(f.read().split())

    def test_installs_the_pinned_toolchain_once_onto_the_path(self):
        r = self.deps("rust")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.access(os.path.join(self.home, ".cargo", "bin", "rustup"), os.X_OK))
        self.assertFalse(os.path.exists(os.path.join(self.cargo_cache, "bin")), "binaries went to the crate cache")
        self.assertEqual(os.listdir(os.path.join(self.home, ".rustup", "toolchains")), [f"{PINNED}-{HOST}"])
        self.assertLessEqual(TARGETS, self.toolchain("targets"))
        self.assertLessEqual({"rustfmt", "clippy"}, self.toolchain("components"))
        calls = self.calls()
        inits = [c for c in calls if c.startswith("rustup-init")]
        self.assertEqual(len(inits), 1, calls)
        self.assertIn(f"--default-toolchain {PINNED}", inits[0])
        self.assertEqual([c for c in calls if "toolchain install" in c], [f"rustup toolchain install {PINNED} --component rustfmt,clippy"])
        self.assertFalse([c for c in calls if "stable" in c], calls)
        # Again: rustup is found where it was put, and nothing is installed twice.
        n = len(calls)
        r = self.deps("rust")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        later = self.calls()[n:]
        self.assertFalse([c for c in later if re.search(r"^rustup-init| install | add ", c)], later)

    def test_adds_what_an_existing_rustup_lacks(self):
        bin_dir = os.path.join(self.home, ".cargo", "bin")
        os.makedirs(bin_dir)
        shutil.copy(os.path.join(self.tmp, "rustup.py"), os.path.join(bin_dir, "rustup"))
        os.chmod(os.path.join(bin_dir, "rustup"), 0o755)
        r = self.deps("rust")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse([c for c in self.calls() if c.startswith("rustup-init")])
        self.assertLessEqual(TARGETS, self.toolchain("targets"))

    def test_a_failed_download_stops_with_an_error(self):
        r = self.deps("rust", url="file://" + os.path.join(self.tmp, "missing"))
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.home, ".cargo")))
        self.assertEqual(self.calls(), [])

    def test_the_download_is_for_this_host(self):
        r = subprocess.run([DEPS, "--rustup-url"], capture_output=True, text=True,
                           env={"PATH": os.environ["PATH"], "HOME": self.home})
        self.assertEqual(r.returncode, 0, r.stderr)
        arch = {"amd64": "x86_64", "arm64": "aarch64", "riscv64": "riscv64gc"}.get(platform.machine(), platform.machine())
        self.assertEqual(r.stdout.strip(),
                         f"https://static.rust-lang.org/rustup/dist/{arch}-unknown-linux-gnu/rustup-init")


if __name__ == "__main__":
    unittest.main()
