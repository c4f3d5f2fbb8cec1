#!/usr/bin/env python3
"""The commands reach the engine through its one entry, and the engine the OS through platform.

`app` and `cli` may name `engine::measure` (the entry: a measurement's plan, its run and its
outcome types), `engine::scan` (the surface scan's own kernel) and the engine's error types at
its root (`engine::EngineError`, `engine::Result`) — no other engine module. Reads every `.rs`
file under crates/app and crates/cli (source and tests), comments and strings left out, and
checks each path that starts with `engine::`, including the items of `use engine::{...}`.

The engine names no OS crate (`libc`, `rustix`, `windows_sys`) outside its backends
(`crates/engine/src/io/backend/`): every other OS call is `platform`'s.

    .ci/engine_entry.py            check the workspace (exit 1 and a list when a rule breaks)
    .ci/engine_entry.py --self-test
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
# The one Rust source reader of the CI scripts: comments, strings and char literals blanked.
from module_graph import strip  # noqa: E402

ALLOWED = {"measure", "scan", "EngineError", "Result"}
ROOTS = ["crates/app", "crates/cli"]


def offences(src: str):
    """(line, path) for every engine path that names a module other than the entry."""
    code = strip(src)
    found = []
    for m in re.finditer(r"(?<![A-Za-z0-9_:])engine\s*::\s*(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)", code):
        line = code.count("\n", 0, m.start()) + 1
        head = m.group(1)
        names = [x.strip().split("::")[0].split(" ")[0] for x in head.strip("{}").split(",")] if head.startswith("{") else [head]
        for name in names:
            if name and name != "self" and name not in ALLOWED:
                found.append((line, f"engine::{name}"))
    return found


OS_CRATES = re.compile(r"(?<![A-Za-z0-9_:])(libc|rustix|windows_sys)\s*::")


def os_calls(src: str):
    """(line, crate) for every path into an OS crate."""
    code = strip(src)
    return [(code.count("\n", 0, m.start()) + 1, m.group(1)) for m in OS_CRATES.finditer(code)]


def self_test() -> int:
    bad = {
        "use": "use engine::io::runner::bind;\n",
        "group": "use engine::{measure, target::probe};\n",
        "body path": "fn f() { let x = engine::io::memory::check(); }\n",
        "spaced": "fn f() { engine :: target::open_target(); }\n",
    }
    good = {
        "entry": "use engine::measure::{self, Need};\nfn f() -> engine::Result<()> { engine::scan::scan(); Ok(()) }\n",
        "comment": "// engine::io::runner is private\n/* engine::target */ fn f() {}\n",
        "string": 'fn f() { let s = "engine::io::runner"; let r = r#"engine::target"#; }\n',
        "other crate": "use diskmeter_engine_x::io; fn f() { my_engine::io::x(); }\n",
    }
    failed = 0
    for name, src in bad.items():
        if not offences(src):
            print(f"self-test: a {name} naming an engine module was not found")
            failed += 1
    for name, src in good.items():
        if offences(src):
            print(f"self-test: a {name} was taken for an engine module: {offences(src)}")
            failed += 1
    if not os_calls("fn f() { unsafe { libc::mmap(); } }\n") or os_calls('// libc::x\nfn f() { let s = "rustix::fs"; }\n'):
        print("self-test: the OS-crate check misses a call or takes a comment for one")
        failed += 1
    print("self-test:", "failed" if failed else f"ok ({len(bad)} planted paths found, {len(good)} clean files clean)")
    return 1 if failed else 0


def main() -> int:
    if "--self-test" in sys.argv:
        return self_test()
    root = pathlib.Path(__file__).resolve().parent.parent
    bad = []
    for r in ROOTS:
        for p in sorted((root / r).rglob("*.rs")):
            for line, path in offences(p.read_text()):
                bad.append(f"{p.relative_to(root)}:{line}: {path}")
    backend = root / "crates/engine/src/io/backend"
    seam = []
    for p in sorted((root / "crates/engine").rglob("*.rs")):
        if backend in p.parents:
            continue
        for line, crate in os_calls(p.read_text()):
            seam.append(f"{p.relative_to(root)}:{line}: {crate}::")
    if bad:
        print("app and cli must reach the engine through engine::measure (or engine::scan):")
        print("\n".join(bad))
    if seam:
        print("the engine calls the OS through platform (only io/backend/ may name an OS crate):")
        print("\n".join(seam))
    if bad or seam:
        return 1
    print("engine entry: app and cli name only engine::measure, engine::scan and the engine's error types")
    print("OS seam: the engine names no OS crate outside io/backend/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
