// libFuzzer entry for the CBOR decoder. Compiled into module `Codecs` by Tests/Fuzz/fuzz.sh.
// Properties checked on every input: no crash, no sanitizer report, and anything the lenient
// decoder accepts re-encodes deterministically into bytes the strict decoder accepts and decodes
// to the same value (NaN aside).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBOR(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let value = try? CBOR(parsing: bytes) else { return 0 }
    let canonical = value.encoded()
    guard let again = try? CBOR(parsing: canonical, options: .strict) else {
        fatalError("deterministic re-encoding rejected by the strict decoder: \(canonical)")
    }
    if again.encoded() != canonical { fatalError("re-encoding is not stable: \(value.diagnostic)") }
    _ = value.diagnostic
    return 0
}
