#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a while each, one after the other, and prints a
# table of what each run reached: inputs run, coverage (cov: edges, ft: features), executions per
# second and whether it found a crash. The long runs docs/fuzzing.md reports come from here; the
# short runs inside `swift test` only check that the harnesses build and hold on their seeds.
#
#   Tests/Fuzz/fuzz-all.sh [--seconds N] [target…]      default 60 s each, all targets
#
# Each target's log, working corpus (seeds + what the fuzzer grew) and crash files stay in
# $LOCKBENCH_FUZZ_OUT/<target>/ (default <repo>/.build-fuzz/<target>/). Exit 1 if any target crashed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
seconds=60
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
        --seconds=*) seconds="${1#*=}"; shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz-all.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "fuzz-all.sh: --seconds takes a whole number > 0, not '$seconds'" >&2; exit 2; }
[[ ${#targets[@]} -gt 0 ]] || mapfile -t targets < <(cd "$here" && ls *.swift | sed 's/\.swift$//')

build="${LOCKBENCH_BUILD_DIR:-}"
if [[ -z "$build" ]]; then
    (cd "$repo" && swift build --target OfflineUnlock >&2)
    export LOCKBENCH_BUILD_DIR="$repo/.build/debug"
fi
root="${LOCKBENCH_FUZZ_OUT:-$repo/.build-fuzz}"
failed=0
printf '| target | seconds | runs | cov | ft | exec/s | corpus | result |\n|---|---|---|---|---|---|---|---|\n'
for target in "${targets[@]}"; do
    out="$root/$target"; mkdir -p "$out"
    status=0
    LOCKBENCH_FUZZ_OUT="$out" "$here/fuzz.sh" "$target" -max_total_time="$seconds" -print_final_stats=1 >"$out/fuzz.log" 2>&1 || status=$?
    last="$(grep -E '^#[0-9]+' "$out/fuzz.log" | tail -1)"
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/fuzz.log" | tail -1)"
    cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
    ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
    corp="$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")"
    if [[ $status -eq 0 ]]; then result="no crash"
    else result="FAILED (exit $status): $(ls "$out" | grep -E '^(crash|timeout|oom|leak)-' | head -1)"; failed=1; fi
    printf '| `%s` | %s | %s | %s | %s | %s | %s | %s |\n' "$target" "$seconds" "${runs:-?}" "${cov:-?}" "${ft:-?}" "${rate:-?}" "${corp:-?}" "$result"
done
exit $failed
