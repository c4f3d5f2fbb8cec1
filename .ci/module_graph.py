#!/usr/bin/env python3
"""Module import circles in the workspace's crates, read from the source text itself.

Every way Rust names a module counts as an edge from the module that names it to the module
that owns the named thing:

- `use` lines, with their `{…}` groups, globs and renames (`pub use` re-exports too);
- paths written out in code: `crate::io::handoff::plan(…)`, `super::worker::Slot`, `self::x::y`;
- a child module named by its bare name (`runner::Tick` in the module that declares `mod runner`).

A path resolves to the longest prefix of it that is a module. Comments, strings and character
literals are removed first, so a path in a doc comment is not an edge. Inline modules
(`mod tests { … }`) are modules of their own, so `super::` inside one means the file's module.

The crate root (lib.rs, main.rs) is the crate's facade: it declares the modules and re-exports
their items, and the modules take the crate's shared items from it; it is left out of circles.
A circle is a strongly connected set of the other modules (two or more), or a module that names
itself through a longer way round.

Usage: module_graph.py [--known FILE] [CRATE_DIR…]   (default: every crates/*/)
       module_graph.py --self-test     (plants one circle of each kind and checks each is found)
Prints one line per crate and each circle's edges with the lines that make them. Exit 1 on any
circle, except those `--known FILE` lists (one per line, `CRATE: crate::a ↔ crate::b`, as printed):
the circles found when this check came, each still to be taken apart. A known circle that is gone
fails too, until it leaves the list, so the list says what is true.
"""
import os
import re
import sys
import tempfile

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(src: str) -> str:
    """The source with comments, strings and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', src[i:])) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m[1]
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def use_paths(tree: str, prefix: list[str]) -> list[list[str]]:
    """The paths a `use` tree names: `a::{b, c::{d, e as f}, self}` → a::b, a::c::d, …"""
    tree = tree.strip()
    depth, parts, cur = 0, [], ""
    # Split the top level at the first `{` group, if any.
    m = re.match(r"^((?:::)?(?:" + IDENT + r"\s*::\s*)*)\{(.*)\}$", tree, re.S)
    if m:
        head = [s for s in re.split(r"\s*::\s*", m[1].strip()) if s]
        inner = m[2]
        out = []
        for ch in inner:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        for p in parts:
            if p.strip():
                out.extend(use_paths(p, prefix + head))
        return out
    tree = re.sub(r"\s+as\s+" + IDENT + r"$", "", tree)
    segs = [s for s in re.split(r"\s*::\s*", tree) if s]
    if segs and segs[-1] == "self":
        segs = segs[:-1]
    if segs and segs[-1] == "*":
        segs = segs[:-1]
    return [prefix + segs]


class Crate:
    def __init__(self, src_dir: str, root_file: str):
        self.src = src_dir
        self.modules: dict[tuple, str] = {}  # module path → file
        self.children: dict[tuple, set] = {}
        self.uses: list[tuple[tuple, list[str], str]] = []  # (from module, path, where)
        self.load((), os.path.join(src_dir, root_file), is_root=True)

    def child_file(self, mod_path: tuple, file: str, is_root: bool, name: str, attr_path: str | None):
        base = os.path.dirname(file)
        if attr_path:
            return os.path.join(base, attr_path)
        stem = os.path.splitext(os.path.basename(file))[0]
        d = base if is_root or stem == "mod" else os.path.join(base, stem)
        for cand in (os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs")):
            if os.path.exists(cand):
                return cand
        return None

    def load(self, mod_path: tuple, file: str, is_root: bool):
        self.modules[mod_path] = file
        self.children.setdefault(mod_path, set())
        with open(file, encoding="utf-8") as f:
            text = strip(f.read())
        self.scan(mod_path, file, text, is_root)

    def scan(self, file_mod: tuple, file: str, text: str, is_root: bool):
        # Module scopes by brace depth: inline `mod name {` opens one.
        scopes = [(file_mod, 0)]
        depth = 0
        token = re.compile(
            r"(?P<attrpath>#\[path\s*=\s*\"(?P<ap>[^\"]*)\"\])"
            r"|(?P<mod>\bmod\s+(?P<mname>" + IDENT + r")\s*(?P<mend>[;{]))"
            r"|(?P<use>\buse\s+(?P<utree>[^;]*);)"
            r"|(?P<path>(?<![A-Za-z0-9_:])(?:crate|super|self|Self|" + IDENT + r")(?:\s*::\s*(?:" + IDENT + r"|\*))+)"
            r"|(?P<open>\{)|(?P<close>\})"
        )
        pending_path = None
        raw = open(file, encoding="utf-8").read()
        for m in token.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            where = f"{os.path.relpath(file)}:{line}"
            cur = scopes[-1][0]
            if m["attrpath"] is not None:
                # strip() blanked the string: read it from the raw text at the same place.
                pm = re.match(r'#\[path\s*=\s*"([^"]*)"\]', raw[m.start():])
                pending_path = pm[1] if pm else None
            elif m["mod"]:
                name = m["mname"]
                child = cur + (name,)
                self.children.setdefault(cur, set()).add(name)
                if m["mend"] == ";":
                    f = self.child_file(cur, file, is_root and cur == file_mod, name, pending_path) if cur == file_mod else None
                    if f:
                        self.load(child, f, is_root=False)
                else:
                    depth += 1
                    self.modules.setdefault(child, file)
                    self.children.setdefault(child, set())
                    scopes.append((child, depth))
                pending_path = None
            elif m["use"]:
                tree = m["utree"]
                for p in use_paths(tree, []):
                    self.uses.append((cur, p, where))
            elif m["path"]:
                segs = [s for s in re.split(r"\s*::\s*", m["path"]) if s and s != "*"]
                self.uses.append((cur, segs, where))
            elif m["open"]:
                depth += 1
            elif m["close"]:
                if len(scopes) > 1 and scopes[-1][1] == depth:
                    scopes.pop()
                depth -= 1

    def resolve(self, cur: tuple, segs: list[str]):
        """The module a path names (its longest module prefix), or None (an external crate, a
        type's associated item, a local name)."""
        if not segs:
            return None
        if segs[0] == "crate":
            base, rest = (), segs[1:]
        elif segs[0] in ("super", "self"):
            base, rest = cur, segs
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        elif segs[0] == "Self":
            return None
        elif segs[0] in self.children.get(cur, set()):
            base, rest = cur, segs
        elif cur == () and segs[0] in self.children.get((), set()):
            base, rest = (), segs
        else:
            return None
        path = base
        for s in rest:
            if path + (s,) in self.modules:
                path = path + (s,)
            else:
                break
        return path

    def edges(self):
        out: dict[tuple, dict[tuple, str]] = {}
        for cur, segs, where in self.uses:
            target = self.resolve(cur, segs)
            if target is None or target == cur or target == () or cur == ():
                continue
            # A module naming its own child (or deeper) by declaring or using it is its own
            # business only when the child does not name it back: keep every edge.
            out.setdefault(cur, {}).setdefault(target, where)
        return out


def circles(edges: dict) -> list[list[tuple]]:
    nodes = sorted(set(edges) | {t for d in edges.values() for t in d})
    index, low, on, stack, sccs, n = {}, {}, set(), [], [], 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    scc = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        scc.append(w)
                        if w == v:
                            break
                    if len(scc) > 1:
                        sccs.append(sorted(scc))
    return sccs


def name(m: tuple) -> str:
    return "::".join(("crate",) + m)


def check(crate_dir: str) -> tuple[int, list[str]]:
    src = os.path.join(crate_dir, "src")
    lines = []
    found = 0
    for root in ("lib.rs", "main.rs"):
        if not os.path.exists(os.path.join(src, root)):
            continue
        c = Crate(src, root)
        e = c.edges()
        for scc in circles(e):
            found += 1
            members = set(scc)
            lines.append("circle: " + " ↔ ".join(name(m) for m in scc))
            for a in scc:
                for b, where in sorted(e.get(a, {}).items()):
                    if b in members:
                        lines.append(f"  {name(a)} → {name(b)}  ({where})")
    return found, lines


def self_test() -> int:
    """Plant one circle of each kind in a scratch crate; each must be found, and the clean crate
    must not be."""
    kinds = {
        "use": ("use crate::b::B;\npub struct A;\n", "use crate::a::A;\npub struct B;\n"),
        "use group": ("use crate::{b::B, c};\npub struct A;\n", "use crate::{a::{A}};\npub struct B;\n"),
        "path in a body": ("pub fn a() { crate::b::b(); }\n", "pub fn b() { crate::a::a(); }\n"),
        "super": ("pub fn a() { super::b::b(); }\n", "use super::a;\npub fn b() { a::a(); }\n"),
        "re-export": ("pub use crate::b::B;\npub struct A;\n", "pub use super::a::A as Renamed;\npub struct B;\n"),
        "glob": ("use crate::b::*;\npub struct A;\n", "use super::a::*;\npub struct B;\n"),
    }
    clean = ("pub struct A;\n", "use crate::a::A;\npub struct B(pub A);\n")
    failures = 0
    for kind, (a, b) in list(kinds.items()) + [("none", clean)]:
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src"))
            with open(os.path.join(d, "src/lib.rs"), "w") as f:
                f.write("// crate::b::b in a comment is not an edge\npub mod a;\npub mod b;\npub mod c;\n")
            with open(os.path.join(d, "src/a.rs"), "w") as f:
                f.write(a + "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n")
            with open(os.path.join(d, "src/b.rs"), "w") as f:
                f.write(b + 'const S: &str = "crate::a::A";\n')
            with open(os.path.join(d, "src/c.rs"), "w") as f:
                f.write("pub fn c() {}\n")
            found, lines = check(d)
            want = 0 if kind == "none" else 1
            ok = found == want
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {kind}: {found} circle(s)" + ("" if ok else "\n" + "\n".join(lines)))
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    args = argv[1:]
    if args == ["--self-test"]:
        return self_test()
    known: set[str] = set()
    if args[:1] == ["--known"]:
        with open(args[1], encoding="utf-8") as f:
            known = {l.strip() for l in f if l.strip() and not l.startswith("#")}
        args = args[2:]
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = args or sorted(os.path.join(here, "..", "crates", d) for d in os.listdir(os.path.join(here, "..", "crates")))
    total, new, seen = 0, 0, set()
    for d in dirs:
        if not os.path.isdir(os.path.join(d, "src")):
            continue
        crate = os.path.basename(os.path.normpath(d))
        found, lines = check(d)
        total += found
        print(f"{'ok    ' if not found else 'CIRCLE'} {crate}" + (f": {found}" if found else ""))
        for line in lines:
            if line.startswith("circle: "):
                tag = f"{crate}: {line[len('circle: '):]}"
                seen.add(tag)
                is_known = tag in known
                new += not is_known
                line = ("known " if is_known else "NEW   ") + line
            print("        " + line)
    gone = sorted(known - seen)
    for g in gone:
        print(f"GONE   {g}  (taken apart: remove it from the known list)")
    print(f"module circles: {total} ({total - new} known, {new} new; {len(gone)} known ones gone)")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
