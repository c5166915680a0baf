// fuzz-module: OfflineUnlock
// libFuzzer entry for access and revocation documents (the step-up payloads a lock receives from
// any phone). Compiled into module `OfflineUnlock` by Tests/Fuzz/fuzz.sh; CBOR and COSE come
// from the debug build. Every input goes through the document parsers, verification against a
// trust store, and the whole decision engine; parsed documents must re-encode to bytes that
// parse to the same document.

import ByteCore
import Codecs
import Foundation

/// The issuer that signed the seeds in Tests/Fuzz/corpus/document, so the seeds verify and the
/// fuzzer reaches every engine check after the signature.
private let fuzzIssuer: [UInt8] = Hex.decode("04b9ee8fe209c1c5865750a2d8056fde0c108a8045d9f142f1e1f69b294490df1b349280f603b1b63795e40bc7342e2703a17bdb1acb821f6bc143e546b3b3ac7f")!
private let fuzzCore = DecisionCore(
    reader: ReaderIdentity(groupID: [UInt8](repeating: 0xA1, count: 16), subID: [UInt8](repeating: 0xB1, count: 16)),
    policy: LockPolicy(), trust: try! TrustStore(issuerPublicKeys: [fuzzIssuer]))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDocument(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let doc = try? IssuedDocument(parsing: bytes) {
        guard let again = try? IssuedDocument(parsing: doc.encoded()), again == doc else {
            fatalError("document does not round-trip")
        }
        _ = try? doc.verify(trust: fuzzCore.trust)
        _ = try? AccessDocument(document: doc)
        _ = try? RevocationDocument(document: doc)
    }
    let now = Date(timeIntervalSince1970: 1_772_442_000)
    var state = EngineState(clock: TrustedClock(trustedAt: now))
    let key = [UInt8](repeating: 4, count: 1) + [UInt8](repeating: 1, count: 64)
    let p = Presentation(credentialPublicKey: key, transactionID: [UInt8](repeating: 0, count: 16), interface: .nfc,
                         protocolVersion: 0x0100, fast: false, accessDocuments: [bytes], revocationDocuments: [bytes])
    _ = fuzzCore.decide(p, state: &state, at: now)
    return 0
}
