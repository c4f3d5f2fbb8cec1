#!/usr/bin/env python3
"""docs/ARCHITECTURE.md's crate table held against the Cargo.toml files: every crate has a row,
and each row's "depends on" names exactly the workspace crates its [dependencies] name (build and
dev dependencies aside). "all of the above" means every crate in the rows above it.

Exit 1 with one line per difference. Usage: architecture.py [REPO_ROOT]
"""
import os
import re
import sys
import tomllib


def workspace_crates(root: str) -> dict[str, set[str]]:
    """Directory name of each crate → the workspace crates (by directory name) it depends on."""
    with open(os.path.join(root, "Cargo.toml"), "rb") as f:
        ws = tomllib.load(f)
    # The workspace's own dependency names point at crates/DIR.
    alias = {}
    for name, spec in ws.get("workspace", {}).get("dependencies", {}).items():
        if isinstance(spec, dict) and str(spec.get("path", "")).startswith("crates/"):
            alias[name] = spec["path"].split("/", 1)[1]
    out = {}
    for d in sorted(os.listdir(os.path.join(root, "crates"))):
        manifest = os.path.join(root, "crates", d, "Cargo.toml")
        if not os.path.exists(manifest):
            continue
        with open(manifest, "rb") as f:
            deps = tomllib.load(f).get("dependencies", {})
        out[d] = {alias[n] for n in deps if n in alias and alias[n] != d}
    return out


def table(root: str) -> list[tuple[str, set[str] | str]]:
    rows = []
    with open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## The crates", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        m = re.match(r"^\|\s*`([a-z]+)`\s*\|.*\|\s*([^|]*)\|\s*$", line)
        if not m:
            continue
        deps = m[2].strip()
        if deps.startswith("all of the above"):
            rows.append((m[1], "all"))
        else:
            # The crate names are the backticked words that open each comma-separated entry.
            rows.append((m[1], set(re.findall(r"(?:^|,\s*)`([a-z]+)`", deps))))
    return rows


def main(argv: list[str]) -> int:
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    crates = workspace_crates(root)
    rows = table(root)
    problems = []
    seen = []
    for name, deps in rows:
        if name not in crates:
            problems.append(f"the table has a row for `{name}`, which is no crate in crates/")
            seen.append(name)
            continue
        said = set(seen) if deps == "all" else deps
        real = crates[name]
        for d in sorted(real - said):
            problems.append(f"`{name}` depends on `{d}` (crates/{name}/Cargo.toml); the table does not say so")
        for d in sorted(said - real):
            if deps == "all":
                continue  # "all of the above" is an upper bound
            problems.append(f"the table says `{name}` depends on `{d}`; crates/{name}/Cargo.toml does not")
        seen.append(name)
    for c in sorted(set(crates) - {n for n, _ in rows}):
        problems.append(f"crates/{c} has no row in docs/ARCHITECTURE.md's crate table")
    for p in problems:
        print(p)
    print(f"architecture: {len(rows)} rows, {len(crates)} crates, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
