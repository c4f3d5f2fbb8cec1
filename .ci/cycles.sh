#!/usr/bin/env bash
# Module import cycles: none in any workspace crate (lib targets, and the cli's bin target).
# A cycle (module A uses B and B uses A, possibly through more modules) means neither can be
# read, tested or moved on its own; the check keeps the count at zero once it is there.
#
# The checker is cargo-modules, pinned: its analysis is rust-analyzer's, and a newer one may
# see edges an older one did not. 0.27.0 is the last release that builds with the toolchain
# .ci/run installs (1.95.0; 0.28 needs 1.98). Installed when missing or at another version.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.27.0
if [ "$(cargo modules --version 2>/dev/null)" != "cargo-modules $version" ]; then
  echo "== installing cargo-modules $version (cargo install --locked)"
  start=$SECONDS
  cargo install --locked --quiet cargo-modules --version "$version"
  echo "cargo-modules $version installed in $((SECONDS - start)) s"
fi

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
    # --acyclic fails on the first cycle and prints it; the graph itself goes to /dev/null.
    if out=$(cargo modules dependencies --package "$pkg" "$target" --acyclic 2>&1 >/dev/null); then
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
