// libFuzzer entry for COSE_Sign1 and COSE_Key. Compiled into module `Codecs` by Tests/Fuzz/fuzz.sh.
// Every input goes through both parsers; accepted COSE_Sign1 values must round-trip and go
// through the whole verification path (header parse, algorithm checks, ECDSA) without crashing.

import ByteCore

/// The P-256 generator point as the issuer key (any valid point will do).
private let fuzzIssuerKey: [UInt8] = Array(Hex.decode(
    "04" + "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
         + "4fe342e2fe1a7f9b8e7eb4a7c0f9e16b2bce33576b315ececbb6406837bf51f5")!)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCOSE(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let sign1 = try? CoseSign1.decode(bytes) {
        guard let back = try? CoseSign1.decode(sign1.encoded()), back == sign1 else {
            fatalError("COSE_Sign1 does not round-trip")
        }
        _ = sign1.kid
        _ = try? sign1.verify(publicKey: fuzzIssuerKey)
    }
    if let key = try? CoseKey.decode(bytes) {
        guard (try? CoseKey.decode(key.encoded())) == key else { fatalError("COSE_Key does not round-trip") }
    }
    return 0
}
