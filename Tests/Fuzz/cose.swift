// libFuzzer entry for COSE_Sign1 and COSE_Key. Compiled into module `Codecs` by Tests/Fuzz/fuzz.sh.
// Every input goes through both parsers; accepted COSE_Sign1 values must round-trip and go
// through the whole verification path (header parse, algorithm checks, ECDSA) without crashing.

import ByteCore

/// A fixed issuer key (the key that signed the document seeds).
private let fuzzIssuerKey: [UInt8] = Array(Hex.decode("04b9ee8fe209c1c5865750a2d8056fde0c108a8045d9f142f1e1f69b294490df1b349280f603b1b63795e40bc7342e2703a17bdb1acb821f6bc143e546b3b3ac7f")!)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCOSE(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let sign1 = try? CoseSign1(parsing: bytes) {
        guard let back = try? CoseSign1(parsing: sign1.encoded()), back == sign1 else {
            fatalError("COSE_Sign1 does not round-trip")
        }
        _ = sign1.kid
        _ = try? sign1.verify(publicKey: fuzzIssuerKey)
    }
    if let key = try? CoseKey(parsing: bytes) {
        guard (try? CoseKey(parsing: key.encoded())) == key else { fatalError("COSE_Key does not round-trip") }
    }
    return 0
}
