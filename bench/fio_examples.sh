#!/usr/bin/env bash
# Which of fio's own example job files diskmeter runs, unmodified apart from where the file is
# and how big (`filename`, `directory` and `size`: a 64 MiB test file in a scratch directory, to
# fit a small machine).
#
#   bench/fio_examples.sh DISKMETER_BINARY EXAMPLES_DIR [SECONDS]
#
# EXAMPLES_DIR holds fio's examples/*.fio (from fio's source tree). Each job file runs for at
# most SECONDS (default 4) and is then stopped with SIGINT (a run stopped that way counts as
# running). Prints one line per file — runs / refused / failed, with diskmeter's first error
# line — and the totals.
set -u
bin=${1:?diskmeter binary}
examples=${2:?directory of fio example job files}
secs=${3:-4}
work=$(mktemp -d "${TMPDIR:-/tmp}/fio-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
runs=0 refused=0 failed=0
for f in "$examples"/*.fio; do
    name=$(basename "$f")
    dir="$work/${name%.fio}"
    mkdir -p "$dir"
    # filename=, directory= and size= only: one test file, 64 MiB, in the scratch directory.
    sed -E -e 's|^([[:space:]]*filename[[:space:]]*=).*|\1'"$dir"'/testfile|' \
        -e 's|^([[:space:]]*directory[[:space:]]*=).*|\1'"$dir"'|' \
        -e 's|^([[:space:]]*size[[:space:]]*=).*|\164m|' "$f" > "$dir/$name"
    out=$(cd "$dir" && timeout -s INT "$secs" "$bin" run "$name" --json -o "$dir/result.json" 2>&1 >/dev/null)
    code=$?
    first=$(printf '%s\n' "$out" | grep -m1 '^error' || true)
    case $code in
        0 | 130 | 124) runs=$((runs + 1)); printf 'runs     %s\n' "$name" ;;
        2) refused=$((refused + 1)); printf 'refused  %s  %s\n' "$name" "$first" ;;
        *) failed=$((failed + 1)); printf 'failed   %s  (exit %s) %s\n' "$name" "$code" "$first" ;;
    esac
    rm -rf "$dir"
done
echo "total: $((runs + refused + failed)) job files: $runs run, $refused refused, $failed failed"
