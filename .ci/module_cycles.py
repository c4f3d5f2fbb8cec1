#!/usr/bin/env python3
"""Module-level import cycles in a `cargo modules dependencies` graph (DOT, on stdin).

cargo-modules' own `--acyclic` works on items: a type and its method that names the type are
already a "cycle", so every crate fails it. Here each item stands for the module that owns it,
and a cycle is one between modules: A uses something of B and B, directly or through other
modules, uses something of A. Exit 1 and each cycle's edges on stdout when there is one.
"""
import re
import sys

NODE = re.compile(r'^\s*"([^"]+)" \[label=.*// "([^"]+)" node')
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[label="uses"')

def main() -> int:
    kinds, uses = {}, []
    for line in sys.stdin:
        if m := EDGE.match(line):
            uses.append((m[1], m[2]))
        elif m := NODE.match(line):
            kinds[m[1]] = m[2]
    modules = {p for p, k in kinds.items() if k in ("mod", "crate")}

    def owner(path: str) -> str | None:
        while path and path not in modules:
            path = path.rpartition("::")[0]
        return path or None

    edges: dict[str, set[str]] = {m: set() for m in modules}
    why: dict[tuple[str, str], list[str]] = {}
    for src, dst in uses:
        a, b = owner(src), owner(dst)
        if a and b and a != b:
            edges[a].add(b)
            why.setdefault((a, b), []).append(dst)

    # Tarjan's strongly connected components, iteratively (deep module trees).
    index, low, on, stack, sccs, n = {}, {}, set(), [], [], 0
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = n; n += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = n; n += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
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
                        w = stack.pop(); on.discard(w); scc.append(w)
                        if w == v:
                            break
                    if len(scc) > 1:
                        sccs.append(sorted(scc))
    for scc in sccs:
        print("cycle: " + " <-> ".join(scc))
        inside = set(scc)
        for a in scc:
            for b in sorted(edges[a] & inside):
                items = sorted(set(why[(a, b)]))
                more = f" (+{len(items) - 3} more)" if len(items) > 3 else ""
                print(f"  {a} -> {b}: uses {', '.join(items[:3])}{more}")
    return 1 if sccs else 0

if __name__ == "__main__":
    sys.exit(main())
