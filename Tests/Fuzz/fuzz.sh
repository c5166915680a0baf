#!/usr/bin/env bash
# Builds and runs one libFuzzer target over one of LockBench's parsers (codecs, documents, the
# virtual PN532, the BLE host).
#
#   Tests/Fuzz/fuzz.sh <target> [libFuzzer flags…]     e.g.  Tests/Fuzz/fuzz.sh cbor -runs=20000
#
# Recipe (see docs/fuzzing.md): an executable SwiftPM target built with -sanitize=fuzzer does not
# link, so the module's sources (Sources/Codecs/** by default) are compiled directly by swiftc
# together with the entry file Tests/Fuzz/<target>.swift, instrumented with
# -sanitize=fuzzer,address, as that module (-parse-as-library: the entry defines
# LLVMFuzzerTestOneInput, libFuzzer brings main); a `// fuzz-module: NAME` line in the entry picks
# Sources/NAME instead. Its dependencies (ByteCore, and Codecs + swift-crypto where imported) are
# linked from an ordinary debug build (`swift build --target OfflineUnlock`), uninstrumented: only
# the parsers under test carry coverage.
#
# Environment:
#   LOCKBENCH_BUILD_DIR  debug build products to link (default: <repo>/.build/debug, built if absent)
#   LOCKBENCH_FUZZ_OUT   where the working corpus, crash files and a link to the binary go
#                        (default: <repo>/.build-fuzz)
#   LOCKBENCH_FUZZ_CACHE where compiled harnesses are kept, keyed by a hash of all they are built
#                        from (default: <build dir>/fuzz-harness)
set -euo pipefail

target="${1:?usage: fuzz.sh <target> [libFuzzer flags…]; targets: $(cd "$(dirname "$0")" && ls *.swift | sed 's/\.swift$//' | tr '\n' ' ')}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
entry="$here/$target.swift"
[[ -f "$entry" ]] || { echo "fuzz.sh: no entry file $entry" >&2; exit 2; }

build="${LOCKBENCH_BUILD_DIR:-}"
if [[ -z "$build" ]]; then
    (cd "$repo" && swift build --target OfflineUnlock >&2)
    build="$repo/.build/debug"
fi
out="${LOCKBENCH_FUZZ_OUT:-$repo/.build-fuzz}"
mkdir -p "$out"

# The module under test: `// fuzz-module: NAME` in the entry file (default Codecs). Its sources are
# compiled instrumented; the modules below it are linked from the debug build.
module="$(sed -n 's|^// fuzz-module: *\([A-Za-z0-9_]*\).*|\1|p' "$entry" | head -1)"
module="${module:-Codecs}"

shopt -s nullglob
# All of Sources/NAME, or only the paths (files or folders, relative to it) of a
# `// fuzz-sources: PATH…` line: an entry that needs a small part of a big module compiles faster.
subset="$(sed -n 's|^// fuzz-sources: *||p' "$entry" | head -1)"
sources=()
for path in ${subset:-.}; do
    mapfile -t -O "${#sources[@]}" sources < <(find "$repo/Sources/$module/$path" -name '*.swift' | sort)
done
[[ ${#sources[@]} -gt 0 ]] || { echo "fuzz.sh: no sources in Sources/$module (from the entry's fuzz-module line)" >&2; exit 2; }

# Uninstrumented dependencies from the debug build: ByteCore always; Codecs and swift-crypto (with
# _CryptoExtras, SwiftASN1 and BoringSSL's C objects) only when the module or the entry imports
# them (not BLE, VirtualPN532).
deps=("$build"/ByteCore.build/*.o)
[[ ${#deps[@]} -gt 0 ]] || { echo "fuzz.sh: no build products in $build; run 'swift build --target OfflineUnlock'" >&2; exit 3; }
# More modules below the one under test, uninstrumented: `// fuzz-link: NAME…` in the entry (e.g.
# Lock needs OfflineUnlock, AccessProtocol, Certification).
links=($(sed -n 's|^// fuzz-link: *||p' "$entry" | head -1))
for m in "${links[@]}"; do
    objects=("$build/$m.build"/*.o)
    [[ ${#objects[@]} -gt 0 ]] || { echo "fuzz.sh: no objects for $m in $build (from the entry's fuzz-link line); run 'swift build --build-tests'" >&2; exit 3; }
    deps+=("${objects[@]}")
done
if [[ "$module" == Codecs || ${#links[@]} -gt 0 ]] || grep -qE '^import (Codecs|Crypto)$' "${sources[@]}" "$entry"; then
    # _CryptoExtras (AES block permutation for the BLE rotating tag) and what it needs (SwiftASN1);
    # swift-crypto 4 adds the XKCP objects (CXKCP, CXKCPShims) when present.
    deps+=("$build"/Crypto.build/*.o "$build"/CryptoBoringWrapper.build/*.o "$build"/_CryptoExtras.build/*.o "$build"/SwiftASN1.build/*.o)
    for extra in CXKCP CXKCPShims; do
        [[ -d "$build/$extra.build" ]] && while IFS= read -r -d '' o; do deps+=("$o"); done < <(find "$build/$extra.build" -name '*.o' -print0)
    done
    [[ "$module" != Codecs ]] && deps+=("$build"/Codecs.build/*.o)
    while IFS= read -r -d '' o; do deps+=("$o"); done < <(find "$build/CCryptoBoringSSL.build" "$build/CCryptoBoringSSLShims.build" -name '*.o' -print0)
    [[ ${#deps[@]} -gt 10 ]] || { echo "fuzz.sh: no swift-crypto build products in $build; run 'swift build --target OfflineUnlock'" >&2; exit 3; }
fi
# System-library modules (CBlueZ for BLE, CLibNFC for NFC): their module maps, as SwiftPM passes them.
modulemaps=()
for map in "$repo"/Sources/*/module.modulemap; do modulemaps+=(-Xcc "-fmodule-map-file=$map"); done

# One compiled harness per content: the binary is cached under a hash of the compiler, the flags,
# every source and the entry, and every linked object, so `swift test` (whose smoke runs each use
# a fresh LOCKBENCH_FUZZ_OUT) and repeated runs compile a target once until something it is built
# from changes. LOCKBENCH_FUZZ_CACHE overrides where (default: beside the debug build products).
cache="${LOCKBENCH_FUZZ_CACHE:-$build/fuzz-harness}"
mkdir -p "$cache"
flags=(-sanitize=fuzzer,address -parse-as-library -g -module-name "$module" -I "$build/Modules" "${modulemaps[@]}")
key="$( { swiftc --version 2>&1; printf '%s\n' "${flags[@]}"; sha256sum "${sources[@]}" "$entry" "${deps[@]}"; } | sha256sum | cut -c1-16)"
cached="$cache/$target-$key"
if [[ ! -x "$cached" ]]; then
    swiftc "${flags[@]}" -j "$(nproc)" "${sources[@]}" "$entry" "${deps[@]}" -o "$cached.tmp.$$" 2> >(grep -v "Cannot export local symbol" >&2)
    # Older harnesses of this target are stale now; the rename makes a concurrent run see a whole binary.
    find "$cache" -maxdepth 1 -name "$target-*" ! -name "*.tmp.*" -delete
    mv -f "$cached.tmp.$$" "$cached"
else
    echo "fuzz.sh: $target harness $key is up to date ($cached)" >&2
fi
binary="$out/$target-fuzz"
ln -sf "$cached" "$binary"

# Fuzz in a scratch copy of the seed corpus so the checked-in seeds stay as they are.
corpus="$out/corpus-$target"
mkdir -p "$corpus"
[[ -d "$here/corpus/$target" ]] && cp -n "$here/corpus/$target"/* "$corpus"/ 2>/dev/null || true
cd "$out"
# LeakSanitizer is off: Swift packs enum case bits into the spare bits of heap pointers (e.g. the
# boxes of `indirect enum CBOR` held by globals), so LSan cannot see those references and reports
# every such global as leaked. AddressSanitizer's memory-error checks stay on.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
# Swift's own crash backtracer hangs under ASan; libFuzzer reports the crash and saves the input.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
exec "$binary" "$@" "$corpus"
