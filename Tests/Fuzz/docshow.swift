// fuzz-module: LockRuntime
// fuzz-sources: DocumentJSON.swift
// fuzz-link: OfflineUnlock
// libFuzzer entry for `lockbench doc show`: any bytes rendered as the command renders them
// (LockRuntime's `DocumentJSON`), without and with an issuer to verify against, as text and as
// JSON. Issue 9 §3.14: NaN/inf dates in a document crashed `doc show`. Checks: nothing traps; a
// document that renders also encodes as JSON (the CLI encodes with `try!`); its dates print as
// RFC 3339 text. Seeds: the documents of Tests/Fuzz/corpus/document (signed by the issuer below).

import ByteCore
import Codecs
import Foundation
import OfflineUnlock

private let issuer: [UInt8] = Hex.decode("04b9ee8fe209c1c5865750a2d8056fde0c108a8045d9f142f1e1f69b294490df1b349280f603b1b63795e40bc7342e2703a17bdb1acb821f6bc143e546b3b3ac7f")!
private let trust = try! TrustStore(issuerPublicKeys: [issuer])
private let encoder: JSONEncoder = {
    let e = JSONEncoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return e
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDocShow(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for store in [nil, trust] {
        guard let shown = try? DocumentJSON(file: "doc.cbor", bytes: bytes, trust: store) else { return 0 }
        _ = shown.text
        do { _ = try encoder.encode(shown) } catch { fatalError("doc show --json cannot encode what it rendered: \(error)") }
        for date in [shown.validity.signed, shown.validity.validFrom, shown.validity.validUntil] where RFC3339.parse(date) == nil {
            fatalError("a rendered date is not RFC 3339: \(date)")
        }
    }
    return 0
}
