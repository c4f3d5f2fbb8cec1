#!/usr/bin/env bash
# The Windows test step (called by .ci/run after the Linux tests; also runs on its own):
# builds diskmeter.exe for x86_64-pc-windows-gnu (profile dist-release, as shipped), runs clippy
# on the Windows build, then the Windows unit tests and the user-level scenarios under Wine 8 in
# a fresh, throw-away prefix.
# Wine shows that the Windows code builds, links and behaves (target names, refusals, clean-up,
# Ctrl-C, JSON); it says nothing about Windows' performance (Wine runs overlapped I/O
# synchronously and ignores FILE_FLAG_NO_BUFFERING).
# Every check prints one line; all of them run, then the script fails if any failed.
# As root (CI) it installs what it needs and everything must run; as a user without Wine it
# says so and skips (exit 0), unless $CI is set.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export CARGO_TERM_COLOR=never DEBIAN_FRONTEND=noninteractive
triple=x86_64-pc-windows-gnu
start=$SECONDS
is_root=0
[ "$(id -u)" = 0 ] && is_root=1
must_run=$is_root
[ -n "${CI:-}" ] && must_run=1

# ---- checks: one line each, counted; the script fails at the end if one failed
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok:   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
took() { echo "   ($1: $((SECONDS - $2)) s)"; }

echo "== windows: tools (wine, mingw-w64, rust target $triple)"
if [ "$is_root" = 1 ] && command -v apt-get >/dev/null; then
  need=""
  { command -v wine >/dev/null && [ -x /usr/lib/wine/wine64 ]; } || need="$need wine wine64"
  command -v x86_64-w64-mingw32-gcc >/dev/null || need="$need gcc-mingw-w64-x86-64"
  command -v x86_64-w64-mingw32-dlltool >/dev/null || need="$need binutils-mingw-w64-x86-64"
  command -v python3 >/dev/null || need="$need python3"
  if [ -n "$need" ]; then
    apt-get update -qq && apt-get install -y -qq $need >/dev/null
  fi
fi
missing=""
for t in wine wineboot wineserver winepath x86_64-w64-mingw32-gcc python3; do
  command -v "$t" >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
  if [ "$must_run" = 1 ]; then
    echo "error: the Windows tests need$missing (apt-get install wine wine64 gcc-mingw-w64-x86-64)" >&2
    exit 1
  fi
  echo "note: Windows tests skipped: no$missing here (Debian: apt-get install wine wine64 gcc-mingw-w64-x86-64)" >&2
  exit 0
fi
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
rustup target add "$triple" >/dev/null 2>&1 || true
rustup component add clippy >/dev/null 2>&1 || true

target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$repo/$target_dir" ;; esac
# The shipped build: profile dist-release (release, stripped), the exe of dist/build.sh's zip.
exe="$target_dir/$triple/dist-release/diskmeter.exe"

# ---- a fresh Wine prefix, the ProcessPrng shim, drives Q: (tiny, full) and D: (an empty folder)
echo "== windows: fresh Wine prefix"
t=$SECONDS
work=$(mktemp -d)
export WINEPREFIX="$work/prefix"
export WINEDEBUG=-all
# No Mono/Gecko install prompt (nothing here needs .NET or a browser engine).
export WINEDLLOVERRIDES="mscoree=;mshtml="
qdir="$work/q"
ddir="$work/d"
bgpid=""
cleanup() {
  set +e
  [ -n "$bgpid" ] && kill -KILL "$bgpid" 2>/dev/null
  wineserver -k 2>/dev/null
  wineserver -w 2>/dev/null
  if mountpoint -q "$qdir" 2>/dev/null; then
    umount "$qdir" 2>/dev/null || umount -l "$qdir"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$WINEPREFIX" "$qdir" "$ddir" "$work/out"
wineserver -p # one server for the whole step (else each wine start waits for a new one)
sys32="$WINEPREFIX/drive_c/windows/system32"
if ! wineboot -i >"$work/out/wineboot.log" 2>&1 || [ ! -d "$sys32" ]; then
  cat "$work/out/wineboot.log" >&2
  echo "error: wineboot -i could not create the Wine prefix $WINEPREFIX" >&2
  exit 1
fi
# Test fixture only, never shipped: Wine 8 lacks bcryptprimitives.dll!ProcessPrng, which Rust's
# std imports at start-up (real Windows has it).
x86_64-w64-mingw32-gcc -shared -O2 -o "$sys32/bcryptprimitives.dll" .ci/wine/processprng.c -ladvapi32
# Q: a 256 KiB tmpfs for the IOCP engine's disk-full test (root only; the test skips without it).
have_q=0
if [ "$is_root" = 1 ]; then
  if mount -t tmpfs -o size=256k tmpfs "$qdir"; then
    ln -s "$qdir" "$WINEPREFIX/dosdevices/q:"
    have_q=1
  else
    fail "drive Q:: mount -t tmpfs failed (root without CAP_SYS_ADMIN?); the disk-full test cannot run"
  fi
fi
ln -s "$ddir" "$WINEPREFIX/dosdevices/d:"
took "prefix" "$t"

# ---- build (the issue's "Done means" command)
echo "== windows: cargo build --locked --profile dist-release --target $triple -p diskmeter"
t=$SECONDS
built=0
if cargo build --locked --profile dist-release --target "$triple" -p diskmeter && [ -f "$exe" ]; then
  built=1
  pass "build: $(basename "$exe") ($(($(stat -c %s "$exe") / 1024)) KiB)"
else
  fail "build: cargo build --profile dist-release --target $triple -p diskmeter failed"
fi
took "build" "$t"

echo "== windows: cargo clippy --locked --target $triple --workspace -- -D warnings"
t=$SECONDS
if cargo clippy --locked --target "$triple" --workspace -- -D warnings; then
  pass "clippy: the Windows build is clean"
else
  fail "clippy --target $triple: warnings or errors (above)"
fi
took "clippy" "$t"

# ---- unit tests under Wine
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
# insta looks for snapshots under the workspace root, which Wine's processes see as Z:\...
INSTA_WORKSPACE_ROOT=$(winepath -w "$repo" 2>/dev/null)
export INSTA_WORKSPACE_ROOT INSTA_UPDATE=no
testlog="$work/out/unit.log"
: >"$testlog"
unit() { # label, cargo test arguments...
  local label=$1
  shift
  echo "== windows: cargo test --target $triple $* (under Wine)"
  local t=$SECONDS s
  set +e
  cargo test --locked --target "$triple" "$@" 2>&1 | tee -a "$testlog"
  s=${PIPESTATUS[0]}
  set -e
  if [ "$s" = 0 ]; then pass "unit tests: $label"; else fail "unit tests: $label (exit $s, above)"; fi
  took "$label" "$t"
}
unit "platform + engine (lib)" -p diskmeter-platform -p diskmeter-engine --lib
unit "monitor + health" -p diskmeter-monitor -p diskmeter-health
if [ "$have_q" = 1 ]; then
  # The disk-full test skips quietly without Q:; here Q: exists, so it must have run.
  qlog="$work/out/q.log"
  set +e
  cargo test --locked --target "$triple" -p diskmeter-engine --lib a_write_to_a_full_disk_fails_as_no_space \
    -- --nocapture >"$qlog" 2>&1
  s=$?
  set -e
  if [ "$s" != 0 ]; then
    fail "disk-full test on Q: (exit $s): $(grep -m1 -E 'panicked|error' "$qlog" || tail -1 "$qlog")"
  elif grep -q "skipped" "$qlog"; then
    fail "disk-full test on Q: skipped: $(grep -m1 skipped "$qlog")"
  elif grep -q "1 passed" "$qlog"; then
    pass "disk-full test on Q: ran and passed"
  else
    fail "disk-full test on Q: did not run ($(grep -m1 '^test result' "$qlog" || tail -1 "$qlog"))"
  fi
fi

# ---- user-level scenarios, each in its own empty folder C:\dm\NAME
# Wine's own stderr lines (not diskmeter's): dropped before counting diskmeter's lines.
wine_noise='^(Read access denied for device|wine: |it looks like wine32|[0-9a-f]{4}:(err|fixme|warn):)'
scen() { # NAME: a fresh empty folder, its Linux path in $dir
  dir="$WINEPREFIX/drive_c/dm/$1"
  out="$work/out/$1"
  mkdir -p "$dir"
}
dm() { # run diskmeter.exe in $dir: stdout to $out.json, stderr to $out.err; sets $rc, $secs
  local t=$SECONDS
  set +e
  (cd "$dir" && exec wine "$exe" "$@" >"$out.json" 2>"$out.err")
  rc=$?
  set -e
  secs=$((SECONDS - t))
}
errline() { # diskmeter's first stderr line (Wine's noise left out)
  grep -v -E "$wine_noise" "$out.err" | head -1 || true
}
left() { # CHECK, expected entries...: the folder holds exactly these entries
  local name=$1
  shift
  local have want
  have=$(ls -A "$dir" | sort | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
  if [ "$have" = "$want" ]; then
    pass "$name: leaves only [${want% }]"
  else
    fail "$name: left [${have% }] behind, expected [${want% }]"
  fi
}
jcheck() { # CHECK, JSON FILE, python code (d = the document; assert with a message)
  local name=$1 file=$2 code=$3 msg
  if msg=$(python3 - "$file" "$code" 2>&1 <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
exec(sys.argv[2])
EOF
  ); then
    pass "$name"
  else
    fail "$name: $(printf '%s\n' "$msg" | tail -1)"
    [ -n "$(errline)" ] && echo "      (stderr: $(errline))"
  fi
  return 0
}
code() { # CHECK, expected exit code
  if [ "$rc" = "$2" ]; then
    pass "$1: exit $rc (${secs:-?} s)"
  else
    fail "$1: exit $rc, expected $2 ($(errline))"
  fi
}

if [ "$built" = 1 ]; then
  echo "== windows: scenarios (diskmeter.exe under Wine, each in a fresh folder)"
  t=$SECONDS
  wine "$exe" --version >/dev/null 2>&1 || true # Wine's first start of the exe's libraries

  # mark --quick --json in the current folder
  scen mark
  dm mark --quick --json
  code "mark --quick --json" 0
  jcheck "mark --quick: 4 results with read and write IOPS, host.os windows, warning wine, engine iocp" "$out.json" '
r = d["results"]
assert len(r) == 4, f"{len(r)} results, expected 4"
for x in r:
    n, e = x.get("name"), x["spec"]["engine"]
    for k in ("read", "write"):
        assert (x.get(k) or {}).get("iops", 0) > 0, f"{n}: no {k} IOPS"
    assert e == "iocp", f"{n}: engine {e}"
os = d["host"].get("os")
assert os == "windows", f"host.os {os!r}"
codes = [w.get("code") for w in d.get("warnings", [])]
assert "wine" in codes, f"no warning wine: {codes}"
'
  left "mark --quick" # no diskmeter.test left

  # mark D: --quick: the test file D:\diskmeter.test, removed afterwards
  scen mark-d
  dm mark D: --quick --json
  code "mark D: --quick --json" 0
  jcheck "mark D:: target D:\\diskmeter.test, 4 results" "$out.json" '
p = d["target"]["path"]
assert p.lower() == "d:\\diskmeter.test", f"target.path {p!r}"
n = len(d["results"])
assert n == 4, f"{n} results"
k = d["target"].get("device_key", "")
# The device is known by an absolute folder (or the disk), never a relative path.
if "/path:" in k:
    assert k.split("/path:", 1)[1][1:3] == ":\\", f"a relative path: device_key {k!r}"
else:
    assert k.startswith(("wwn:", "serial:")), f"device_key {k!r}"
'
  left "mark D: (current folder)"
  if [ -z "$(ls -A "$ddir")" ]; then
    pass "mark D:: D: is empty afterwards"
  else
    fail "mark D:: left [$(ls -A "$ddir" | tr '\n' ' ')] on D:"
  fi

  # run randrw
  scen run
  dm run --rw randrw --bs 4k --qd 8 --runtime 2s --size 64M --json
  code "run --rw randrw --qd 8 --json" 0
  jcheck "run randrw: read and write IOPS, engine iocp, not partial" "$out.json" '
x = d["results"][0]
for k in ("read", "write"):
    assert (x.get(k) or {}).get("iops", 0) > 0, f"no {k} IOPS"
e = x["spec"]["engine"]
assert e == "iocp", f"engine {e}"
assert not d.get("partial"), "partial"
'
  left "run randrw"
  run_json="$out.json"

  # compare two folders
  scen compare
  mkdir -p "$dir/a" "$dir/b"
  dm compare 'C:\dm\compare\a' 'C:\dm\compare\b' --quick --json
  code "compare A B --quick --json" 0
  jcheck "compare: the compare section with two folder subjects and rows" "$out.json" '
c = d["compare"]
s = c["subjects"]
assert len(s) == 2, f"{len(s)} subjects"
for x, n in zip(s, "ab"):
    src = x.get("source", "")
    assert src.lower() == f"c:\\dm\\compare\\{n}\\diskmeter.test", f"source {src!r}"
assert c["rows"], "no rows"
'
  left "compare (work folder)" a b
  if [ -z "$(ls -A "$dir/a")" ] && [ -z "$(ls -A "$dir/b")" ]; then
    pass "compare: folders A and B are empty afterwards"
  else
    fail "compare: left $(ls -A "$dir/a" "$dir/b" | tr '\n' ' ')"
  fi

  # report of the run's result
  scen report
  cp "$run_json" "$dir/run.json"
  dm report run.json -o x.html
  code "report run.json -o x.html" 0
  if [ -s "$dir/x.html" ] && grep -q -i '<html' "$dir/x.html"; then
    pass "report: x.html is an HTML page ($(($(stat -c %s "$dir/x.html") / 1024)) KiB)"
  else
    fail "report: x.html missing, empty or without <html"
  fi
  left "report" run.json x.html

  # cache simulate: a text trace of the repo (MSR format) and a synthetic binary one
  scen cache
  cp crates/trace/tests/data/msr.csv "$dir/msr.csv"
  dm cache simulate --trace msr.csv --cache-size 64M --json
  code "cache simulate --trace msr.csv" 0
  jcheck "cache simulate msr.csv: action simulate, 5 requests, the qsan policy" "$out.json" '
c = d["cache"]
assert c["action"] == "simulate", c["action"]
assert c["trace"]["requests"] == 5, c["trace"]["requests"]
assert c["policies"][0]["name"] == "qsan", c["policies"][0]["name"]
'
  dm cache synth --dist zipf:0.9 --blocks 2000 --requests 5000 --read-pct 80 -o z.dmt
  code "cache synth -o z.dmt" 0
  dm cache simulate --trace z.dmt --cache-size 4M --policy all --json
  code "cache simulate --trace z.dmt --policy all" 0
  jcheck "cache simulate z.dmt: 5000 requests, five policies" "$out.json" '
c = d["cache"]
assert c["trace"]["requests"] == 5000, c["trace"]["requests"]
n = [p["name"] for p in c["policies"]]
assert n == ["qsan", "lru", "nhit", "s3fifo", "opt"], n
'
  left "cache" msr.csv z.dmt

  # health through smartctl.exe: a stand-in smartctl.exe (test fixture, .ci/wine/fake-smartctl.c)
  # answers with smartctl's JSON for a SATA SSD, then a failing HDD; diskmeter passes it the
  # names smartctl for Windows takes (C:, /dev/pdN) and judges the same JSON as on Linux.
  fake="$work/smart"
  mkdir -p "$fake"
  if x86_64-w64-mingw32-gcc -O2 -o "$fake/smartctl.exe" .ci/wine/fake-smartctl.c; then
    fake_w=$(winepath -w "$fake/smartctl.exe" 2>/dev/null)
    cp crates/health/tests/data/version-7.3.json "$fake/version.json"
    cp crates/health/tests/data/sata-ssd.json "$fake/answer.json"
    scen health
    dm health C: --smartctl "$fake_w" --no-state --json
    code "health C: (smartctl.exe answers for a healthy SSD)" 0
    jcheck "health C:: disk C:, verdict healthy, the SSD's model, smartctl 7.3" "$out.json" '
x = d["disks"][0]
assert x["name"] == "C:", x["name"]
assert x["verdict"] == "healthy", x["verdict"]
assert x["smart"]["model"] == "Samsung SSD 860 EVO 500GB", x["smart"].get("model")
assert d["smartctl_tool"]["version"] == "7.3", d["smartctl_tool"]
'
    if grep -q -- "-a C:$" "$fake/calls.txt" && grep -q -- "--version" "$fake/calls.txt"; then
      pass "health C:: smartctl.exe got --version, then -a C:"
    else
      fail "health C:: smartctl.exe calls were [$(tr '\n' '|' <"$fake/calls.txt")]"
    fi
    : >"$fake/calls.txt"
    dm health '\\.\PhysicalDrive0' --smartctl "$fake_w" --no-state
    code "health \\\\.\\PhysicalDrive0 (text)" 0
    if grep -q -- "-a /dev/pd0$" "$fake/calls.txt"; then
      pass "health \\\\.\\PhysicalDrive0: smartctl.exe got /dev/pd0"
    else
      fail "health \\\\.\\PhysicalDrive0: smartctl.exe calls were [$(tr '\n' '|' <"$fake/calls.txt")]"
    fi
    cp crates/health/tests/data/failing-hdd.json "$fake/answer.json"
    echo 216 >"$fake/exit.txt" # the failing disk's own exit status
    dm health D: --smartctl "$fake_w" --no-state --json
    code "health D: (smartctl.exe answers for a failing HDD)" 1
    jcheck "health D:: verdict failing, with reasons" "$out.json" '
x = d["disks"][0]
assert x["name"] == "D:", x["name"]
assert x["verdict"] == "failing", x["verdict"]
assert any(r["level"] == "failing" for r in x["reasons"]), x["reasons"]
'
    left "health"
  else
    fail "health: cannot build the stand-in smartctl.exe"
  fi

  # history: two null-engine marks kept in a database in the folder; the second says how it
  # changed; history list --json reads them back (bundled SQLite, built by mingw)
  scen history
  dm mark --engine null --quick --time 100ms --history 'C:\dm\history\h.db' --json
  code "mark --history (first)" 0
  dm mark --engine null --quick --time 100ms --history 'C:\dm\history\h.db' --json
  jcheck "mark --history (second): history.id 2, vs run 1 with 8 cells" "$out.json" '
h = d["history"]
assert h["id"] == 2, h
assert h["vs"]["id"] == 1 and len(h["vs"]["cells"]) == 8, h
'
  dm history list --json --history 'C:\dm\history\h.db'
  jcheck "history list --json: runs 2 and 1, command mark" "$out.json" '
assert [r["id"] for r in d] == [2, 1], d
assert all(r["command"] == "mark" for r in d), d
'
  rm -f "$dir"/h.db "$dir"/h.db-wal "$dir"/h.db-shm
  left "history"

  # doctor: the checks read Linux's device tree, so on Windows every device check says it
  # cannot run and why; the answer is still a valid diskmeter.doctor.v1 document, exit 0
  scen doctor
  dm doctor --json -q
  code "doctor (current folder)" 0
  jcheck "doctor --json: diskmeter.doctor.v1, no cause, every check not run with a reason" "$out.json" '
assert d["schema"] == "diskmeter.doctor.v1", d["schema"]
assert d["causes"] == [], d["causes"]
nr = [c for c in d["checks"] if c["status"] == "not-run"]
assert len(nr) >= 15 and all(c.get("reason") for c in nr), d["checks"]
'
  left "doctor"

  # writes to a physical drive are refused without --destroy-data naming it
  scen raw
  dm run --target '\\.\PhysicalDrive0' --rw write --runtime 1s
  code "run --target \\\\.\\PhysicalDrive0 --rw write (no --destroy-data)" 2
  echo "      ($(errline))"
  dm run --target '\\.\PhysicalDrive0' --rw write --runtime 1s --destroy-data '\\.\PhysicalDrive1'
  code "run --target \\\\.\\PhysicalDrive0 --destroy-data \\\\.\\PhysicalDrive1 (wrong drive)" 2
  echo "      ($(errline))"
  left "raw-device refusals"

  # capture: Linux only, refused in one line
  scen capture
  dm capture '\\.\PhysicalDrive0' --duration 1s -o t.dmt
  code "capture" 2
  n=$(grep -v -E "$wine_noise" "$out.err" | grep -c . || true)
  if [ "$n" = 1 ]; then
    pass "capture: one line: $(errline)"
  else
    fail "capture: $n lines on stderr, expected 1: $(grep -v -E "$wine_noise" "$out.err" | head -3 | tr '\n' '|')"
  fi
  left "capture"

  # Ctrl-C: SIGINT to the Wine process becomes CTRL_C_EVENT; the run stops, prints the
  # partial result, removes its test file and exits 130.
  scen ctrlc
  set -m # a background job that does not ignore SIGINT
  (cd "$dir" && exec wine "$exe" run --rw randrw --bs 4k --qd 8 --runtime 30s --size 64M --json \
    >"$out.json" 2>"$out.err") &
  bgpid=$!
  set +m
  t_bg=$SECONDS
  for _ in $(seq 1 100); do # up to 10 s for the test file
    [ -e "$dir/diskmeter.test" ] && break
    sleep 0.1
  done
  sleep 3
  seen_file=0
  [ -e "$dir/diskmeter.test" ] && seen_file=1
  kill -INT "$bgpid" 2>/dev/null || true
  for _ in $(seq 1 200); do # up to 20 s to stop
    kill -0 "$bgpid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$bgpid" 2>/dev/null; then
    fail "Ctrl-C: still running 20 s after SIGINT (killed)"
    kill -KILL "$bgpid" 2>/dev/null || true
  fi
  set +e
  wait "$bgpid"
  rc=$?
  set -e
  secs=$((SECONDS - t_bg))
  bgpid=""
  if [ "$seen_file" = 1 ]; then
    pass "Ctrl-C: diskmeter.test existed while the run was running"
  else
    fail "Ctrl-C: no diskmeter.test while the run was running"
  fi
  code "Ctrl-C of run --runtime 30s" 130
  jcheck "Ctrl-C: partial JSON with read and write IOPS" "$out.json" '
p = d.get("partial")
assert p is True, f"partial {p!r}"
x = d["results"][0]
for k in ("read", "write"):
    assert (x.get(k) or {}).get("iops", 0) > 0, f"no {k} IOPS"
'
  left "Ctrl-C" # the test file removed

  # The release zip's diskmeter.exe (dist/build.sh runs before this step in CI): unzipped, it
  # names its version and commit, and measures.
  zip=$(ls "$target_dir"/dist/diskmeter-*-x86_64-windows.zip 2>/dev/null | head -n1 || true)
  if [ -n "$zip" ]; then
    scen zip
    python3 -m zipfile -e "$zip" "$dir"
    release_exe=$exe
    exe=$(ls "$dir"/diskmeter-*-x86_64-windows/diskmeter.exe)
    dm --version
    if tr -d '\r' <"$out.json" | head -n1 | grep -Eq '^diskmeter [0-9.]+ \(commit [0-9a-f]{12}'; then
      pass "zip: $(basename "$zip")'s diskmeter.exe --version: $(tr -d '\r' <"$out.json" | head -n1)"
    else
      fail "zip: diskmeter.exe --version said: $(head -c 200 "$out.json") $(errline)"
    fi
    dm run --engine null --rw randread --qd 8 --runtime 1s --json
    code "zip: diskmeter.exe run --engine null" 0
    jcheck "zip: diskmeter.exe measures (null engine)" "$out.json" '
assert d["results"][0]["read"]["iops"] > 0, "no IOPS"
'
    exe=$release_exe
  elif [ -n "${DISKMETER_REQUIRE_DIST:-}" ]; then
    fail "zip: no diskmeter-*-x86_64-windows.zip in $target_dir/dist (dist/build.sh did not run?)"
  fi
  took "scenarios" "$t"
else
  fail "scenarios: not run (no diskmeter.exe)"
fi

# One closing line: the checks, and the unit tests' own counts.
units=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed;?$/) p += $i; if ($(i+1) ~ /^failed;?$/) f += $i; if ($(i+1) ~ /^ignored;?$/) s += $i } }
     END { printf "%d passed, %d failed, %d skipped", p, f, s }' "$testlog")
echo "windows: $passed checks passed, $failed failed; unit tests under Wine: $units; $((SECONDS - start)) s"
[ "$failed" = 0 ]
