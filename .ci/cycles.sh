#!/usr/bin/env bash
# Module import cycles: none in any workspace crate (lib targets, and the cli's bin target).
# A cycle (module A uses B and B uses A, possibly through more modules) means neither can be
# read, tested or moved on its own; the check keeps the count at zero once it is there.
#
# The graph is cargo-modules', pinned: its analysis is rust-analyzer's, and a newer one may
# see edges an older one did not. 0.27.0 is the last release that builds with the toolchain
# .ci/run installs (1.95.0; 0.28 needs 1.98). Installed when missing or at another version.
# Its own `--acyclic` checks items, not modules (a type and its method naming the type are a
# "cycle" to it), so .ci/module_cycles.py folds each item into its module and finds the cycles
# between modules. (cargo-cycles 0.2.0 was tried: it takes a module named like its crate for
# the crate root, and reported only those false cycles.)
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.27.0
if [ "$(cargo modules --version 2>/dev/null)" != "cargo-modules $version" ]; then
  echo "== installing cargo-modules $version (cargo install --locked)"
  start=$SECONDS
  cargo install --locked --quiet cargo-modules --version "$version"
  echo "cargo-modules $version installed in $((SECONDS - start)) s"
fi

err=$(mktemp)
trap 'rm -f "$err"' EXIT
status=0
checked=0
for manifest in crates/*/Cargo.toml; do
  dir=${manifest%/Cargo.toml}
  pkg=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$manifest" | head -n 1)
  targets=()
  [ -f "$dir/src/lib.rs" ] && targets+=("--lib")
  [ -f "$dir/src/main.rs" ] && targets+=("--bin=$pkg")
  for target in "${targets[@]}"; do
    checked=$((checked + 1))
    if ! graph=$(cargo modules dependencies --package "$pkg" "$target" --no-externs --no-sysroot 2>"$err"); then
      echo "FAILED  $pkg $target: cargo modules dependencies could not read the crate"
      sed 's/^/        /' "$err"
      status=1
    elif out=$(printf '%s\n' "$graph" | python3 .ci/module_cycles.py); then
      echo "ok      $pkg $target"
    else
      echo "CYCLE   $pkg $target"
      printf '%s\n' "$out" | sed 's/^/        /'
      status=1
    fi
  done
done
echo "module cycles: $checked targets checked, $([ "$status" = 0 ] && echo none || echo 'some found (above)')"
exit "$status"
