// libFuzzer entry for the BER-TLV parser. Compiled into module `Codecs` by Tests/Fuzz/fuzz.sh.
// Properties: no crash; whatever parses re-encodes (shortest length form) and parses back to the
// same elements; constructed values' children parse and rebuild to the same children.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let list = try? TLV.parseAll(bytes) else { return 0 }
    let again = list.encoded()
    guard let reparsed = try? TLV.parseAll(again), reparsed == list else {
        fatalError("TLV re-encoding does not parse back to the same elements")
    }
    for t in list where t.isConstructed {
        // BER allows long length forms, so compare the rebuilt children, not the raw value bytes.
        guard let children = try? t.children(), (try? TLV(t.tag, children: children).children()) == children else {
            fatalError("constructed TLV's children do not rebuild it")
        }
    }
    return 0
}
