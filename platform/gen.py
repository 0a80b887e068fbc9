#!/usr/bin/env python3
"""Generate the shared platform constants in every language that needs them.

One input (platform.toml), one output per language:
  gen.py --rust  out.rs      Rust module tree (`pub mod memmap { pub const UINTC_BASE: usize = ...; }`)
  gen.py --c     out.h       C/C++ header (`#define PLATFORM_MEMMAP_UINTC_BASE 0x3000000ULL`)
  gen.py --scala out.scala   Scala object (`object Platform { object memmap { val UINTC_BASE = BigInt(...) } }`)
  gen.py --tcl   out.tcl     Tcl dict (`set platform(memmap.uintc_base) 0x03000000`)
  gen.py --dts   out.dtsi    DTS macros for the memory map (`#define MEMMAP_UINTC_BASE 0x3000000`)
Several flags may be given at once. Outputs are rewritten only when their text changes, so
build systems keyed on timestamps do not rebuild needlessly.
"""
import argparse
import os
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC = os.path.join(HERE, "platform.toml")
BANNER = "generated from platform/platform.toml by platform/gen.py; do not edit"


def flatten(spec):
    """Yield (section, NAME, value) with value an int or a str; {base,size} tables expand."""
    for section, table in spec.items():
        if not isinstance(table, dict):
            sys.exit(f"platform.toml: top-level key '{section}' must be a [section]")
        for key, value in table.items():
            if isinstance(value, dict):
                extra = set(value) - {"base", "size"}
                if extra:
                    sys.exit(f"platform.toml: {section}.{key} has unknown fields {sorted(extra)}")
                for field in ("base", "size"):
                    if field in value:
                        yield section, f"{key}_{field}".upper(), value[field]
            elif isinstance(value, (int, str)) and not isinstance(value, bool):
                yield section, key.upper(), value
            else:
                sys.exit(f"platform.toml: {section}.{key} must be an integer, a string or {{base, size}}")


def grouped(spec):
    out = {}
    for section, name, value in flatten(spec):
        out.setdefault(section, []).append((name, value))
    return out


def rust(spec):
    lines = [f"// {BANNER}"]
    for section, items in grouped(spec).items():
        lines.append(f"pub mod {section} {{")
        for name, value in items:
            if isinstance(value, str):
                lines.append(f'    pub const {name}: &str = "{value}";')
            else:
                lines.append(f"    pub const {name}: usize = {value:#x};")
        lines.append("}")
    return "\n".join(lines) + "\n"


def c_header(spec):
    lines = [f"// {BANNER}", "#pragma once"]
    for section, name, value in flatten(spec):
        macro = f"PLATFORM_{section.upper()}_{name}"
        if isinstance(value, str):
            lines.append(f'#define {macro} "{value}"')
        else:
            lines.append(f"#define {macro} {value:#x}ULL")
    return "\n".join(lines) + "\n"


def scala(spec, package):
    lines = [f"// {BANNER}", f"package {package}", "", "object Platform {"]
    for section, items in grouped(spec).items():
        lines.append(f"  object {section} {{")
        for name, value in items:
            if isinstance(value, str):
                lines.append(f'    val {name}: String = "{value}"')
            else:
                lines.append(f'    val {name}: BigInt = BigInt("{value:x}", 16)')
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def tcl(spec):
    lines = [f"# {BANNER}"]
    for section, name, value in flatten(spec):
        text = f'"{value}"' if isinstance(value, str) else f"{value:#010x}"
        lines.append(f"set platform({section}.{name.lower()}) {text}")
    return "\n".join(lines) + "\n"


def dts(spec):
    lines = [f"/* {BANNER} */"]
    for section, name, value in flatten(spec):
        if isinstance(value, int):
            lines.append(f"#define {section.upper()}_{name} {value:#x}")
    return "\n".join(lines) + "\n"


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=DEFAULT_SPEC)
    ap.add_argument("--rust")
    ap.add_argument("--c")
    ap.add_argument("--scala")
    ap.add_argument("--scala-package", default="uintr.platform")
    ap.add_argument("--tcl")
    ap.add_argument("--dts")
    args = ap.parse_args()
    with open(args.spec, "rb") as f:
        spec = tomllib.load(f)
    outputs = [(args.rust, lambda: rust(spec)), (args.c, lambda: c_header(spec)),
               (args.scala, lambda: scala(spec, args.scala_package)), (args.tcl, lambda: tcl(spec)),
               (args.dts, lambda: dts(spec))]
    if not any(path for path, _ in outputs):
        ap.error("give at least one output")
    for path, render in outputs:
        if path:
            write_if_changed(path, render())


if __name__ == "__main__":
    main()
