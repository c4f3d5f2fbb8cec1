#!/usr/bin/env bash
# Module circles: none in any workspace crate, kept so.
#
# .ci/module_graph.py reads the source itself and sees every way Rust names a module: `use`
# lines (groups, globs, renames, `pub use` re-exports), paths written out in code
# (`crate::io::handoff::plan(…)`, `super::worker::Slot`), and a child named by its bare name;
# comments and strings are not edges, inline modules (`mod tests { … }`) are modules of their
# own. (cargo-modules, used before, did not count a path written out in a function body, and
# said "none" while seven circles closed that way.) Its own test comes first: a circle planted
# each of those ways must be found, and a clean crate must not be, or the check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "-- the check's own test (a planted circle of each kind)"
python3 .ci/module_graph.py --self-test
echo "-- the workspace"
python3 .ci/module_graph.py
