#!/usr/bin/env bash
# CI: make every release artifact (dist/build.sh), then use each as a user would.
#
#  - the static tarball: `file` calls the binary statically linked, it runs from the unpacked
#    folder, keeps a result in a history database (SQLite, compiled in) and lists it;
#  - the .deb: `dpkg -i`, the installed `diskmeter mark --quick` in a temporary folder,
#    `man diskmeter-mark`, bash's completion loaded the way bash-completion loads it, `dpkg -r`;
#  - the .rpm: its file list and its payload's binary (rpm2cpio | cpio);
#  - the Windows zip: its files (.ci/windows.sh runs its diskmeter.exe under Wine);
#  - SHA256SUMS matches.
# Root only (it installs a package); the closing line is "dist: N checks passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "dist: not root, the package cannot be installed: skipped" >&2
  exit 0
fi
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
check() { # label, command...
  local label=$1
  shift
  if "$@"; then ok "$label"; else fail "$label"; fi
}

echo "== dist/build.sh"
if ! bash dist/build.sh; then
  echo "dist: dist/build.sh failed" >&2
  echo "dist: 0 checks passed, 1 failed"
  exit 1
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
dist="$target_dir/dist"
tgz="$dist/diskmeter-$version-x86_64-linux-musl.tar.gz"
deb="$dist/diskmeter_${version}_amd64.deb"
rpm="$dist/diskmeter-$version.rpm"
zip="$dist/diskmeter-$version-x86_64-windows.zip"
for f in "$tgz" "$deb" "$rpm" "$zip" "$dist/SHA256SUMS"; do
  check "artifact $(basename "$f")" test -s "$f"
done
check "SHA256SUMS" bash -c "cd '$dist' && sha256sum --quiet -c SHA256SUMS"

work=$(mktemp -d)
trap 'dpkg -r diskmeter >/dev/null 2>&1; rm -rf "$work"' EXIT
export DISKMETER_HISTORY=off

echo "== the static binary from the tarball"
tar -C "$work" -xzf "$tgz"
tdir="$work/diskmeter-$version-x86_64-linux-musl"
sbin="$tdir/diskmeter"
kind=$(file -b "$sbin")
echo "file: $kind"
# musl binaries are static PIEs: file(1) says "static-pie linked" (non-PIE: "statically linked").
check "file calls the tarball's binary statically linked" grep -Eq 'static-pie linked|statically linked' <<<"$kind"
check "no program interpreter, no shared library" bash -c "! readelf -lW '$sbin' | grep -q INTERP && ! readelf -dW '$sbin' | grep -q NEEDED"
for f in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE complete/diskmeter.bash complete/_diskmeter \
         complete/diskmeter.fish complete/_diskmeter.ps1 doc/diskmeter.1 doc/diskmeter-mark.1; do
  check "tarball has $f" test -s "$tdir/$f"
done
check "the tarball's binary names version and commit" \
  bash -c "'$sbin' --version | head -n1 | grep -Eq '^diskmeter $version \\(commit [0-9a-f]{12}'"
check "the tarball's binary says it is static" bash -c "'$sbin' --version | grep -q 'statically linked'"
db="$work/history.db"
check "the static binary measures and keeps the result (SQLite)" \
  bash -c "cd '$work' && '$sbin' run --engine null --rw randread --qd 32 --runtime 1s --quiet --history '$db' && '$sbin' history list --json --history '$db' | grep -q '\"command\": *\"run\"'"

echo "== the .deb: install, use, remove"
dpkg -r diskmeter >/dev/null 2>&1
if dpkg -i "$deb"; then
  ok "dpkg -i $(basename "$deb")"
  check "installed as /usr/bin/diskmeter" test "$(command -v diskmeter)" = /usr/bin/diskmeter
  check "the installed binary is the packaged version" bash -c "diskmeter --version | head -n1 | grep -q '^diskmeter $version '"
  mkdir -p "$work/mark"
  if (cd "$work/mark" && diskmeter mark --quick); then
    ok "installed diskmeter mark --quick"
  else
    fail "installed diskmeter mark --quick"
  fi
  check "mark --quick left no file behind" test -z "$(ls -A "$work/mark")"
  check "man -w diskmeter-mark is the package's page" bash -c "man -w diskmeter-mark | grep -q '^/usr/share/man/man1/diskmeter-mark.1.gz$'"
  check "man diskmeter-mark renders its options" bash -c "MANPAGER=cat COLUMNS=100 man diskmeter-mark 2>/dev/null | grep -q -- '--destroy-data'"
  check "man diskmeter names every command" bash -c "MANPAGER=cat man diskmeter 2>/dev/null | grep -q 'diskmeter-doctor(1)'"
  # bash-completion loads /usr/share/bash-completion/completions/diskmeter on the first Tab.
  words=$(bash --norc -c 'source /usr/share/bash-completion/bash_completion 2>/dev/null
    _completion_loader diskmeter >/dev/null 2>&1 || source /usr/share/bash-completion/completions/diskmeter
    COMP_WORDS=(diskmeter ma); COMP_CWORD=1; COMP_LINE="diskmeter ma"; COMP_POINT=${#COMP_LINE}
    $(complete -p diskmeter | sed "s/.*-F \([^ ]*\).*/\1/") diskmeter ma diskmeter
    echo "${COMPREPLY[@]}"')
  check "bash completes 'diskmeter ma' to mark (got: $words)" test "$words" = mark
  check "zsh and fish completions installed" test -s /usr/share/zsh/vendor-completions/_diskmeter -a -s /usr/share/fish/vendor_completions.d/diskmeter.fish
  check "docs installed" test -s /usr/share/doc/diskmeter/README.md -a -s /usr/share/doc/diskmeter/copyright
  if dpkg -r diskmeter; then ok "dpkg -r diskmeter"; else fail "dpkg -r diskmeter"; fi
  check "removed: no binary, no man page" test ! -e /usr/bin/diskmeter -a ! -e /usr/share/man/man1/diskmeter-mark.1.gz
else
  fail "dpkg -i $(basename "$deb")"
fi

echo "== the .rpm"
if command -v rpm >/dev/null; then
  list=$(rpm -qpl "$rpm" 2>/dev/null)
  for f in /usr/bin/diskmeter /usr/share/man/man1/diskmeter.1.gz /usr/share/man/man1/diskmeter-mark.1.gz \
           /usr/share/bash-completion/completions/diskmeter /usr/share/zsh/site-functions/_diskmeter \
           /usr/share/fish/vendor_completions.d/diskmeter.fish /usr/share/licenses/diskmeter/LICENSE-MIT; do
    check "rpm holds $f" grep -qx "$f" <<<"$list"
  done
  check "rpm names diskmeter $version" bash -c "rpm -qp --qf '%{NAME} %{VERSION} %{ARCH}' '$rpm' 2>/dev/null | grep -qx 'diskmeter $version x86_64'"
  mkdir -p "$work/rpm"
  check "rpm payload's binary runs" bash -c "cd '$work/rpm' && rpm2cpio '$rpm' | cpio -idm --quiet && ./usr/bin/diskmeter --version | grep -q '^diskmeter $version '"
else
  fail "rpm is not installed: the .rpm cannot be checked"
fi

echo "== the Windows zip"
zlist=$(python3 -m zipfile -l "$zip" | awk 'NR > 1 {print $1}')
for f in diskmeter.exe README.md LICENSE-MIT LICENSE-APACHE complete/_diskmeter.ps1; do
  check "zip holds $f" grep -qx "diskmeter-$version-x86_64-windows/$f" <<<"$zlist"
done
# Its diskmeter.exe runs under Wine in .ci/windows.sh (the prefix is set up there).

echo "dist: $pass checks passed, $failed failed"
[ "$failed" = 0 ]
