// fuzz-module: OfflineUnlock
// libFuzzer entry that reaches the logic behind the issuer signature: mutated documents never
// verify, so the `document` target cannot fuzz dates, lifetimes, schedules or reader rules. Here
// the input is CBOR `[AccessData, ValidityInfo, seconds, flags]`; the harness builds an access
// document from it, signs it with a fixed test issuer (so it verifies), and runs the decision
// engine at `now` = 2026-03-02T09:00:00Z + seconds, on a trusted clock and after a power loss.
// It checks what the lock promises (docs/security.md), not only that nothing traps:
//   - a grant means validFrom − leeway ≤ now ≤ validUntil + leeway and a lifetime within the policy;
//   - every date the engine keeps is representable (years 0000–9999);
//   - trust restored after a power loss moves the high-water mark by at most
//     maxDocumentLifetime + leeway.

import ByteCore
import Codecs
import Crypto
import Foundation

private let issuerKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32))
private let credentialKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x33, count: 32))
private let issuerPoint = Array(issuerKey.publicKey.x963Representation)
private let credentialPoint = Array(credentialKey.publicKey.x963Representation)
private let t0 = Date(timeIntervalSince1970: 1_772_442_000)
private let policy = LockPolicy()
private let core = DecisionCore(
    reader: ReaderIdentity(groupID: [UInt8](repeating: 0xA1, count: 16), subID: [UInt8](repeating: 0xB1, count: 16)),
    policy: policy, trust: try! TrustStore(issuerPublicKeys: [issuerPoint]))

/// A document carrying `element` and `validity` exactly as given, signed by `issuerKey`.
private func signedDocument(element: CBOR, validity: CBOR) -> [UInt8] {
    let docType = IssuedDocument.DocType.access
    let item = CBOR.embedded([1: 0, 2: .bytes([UInt8](repeating: 7, count: 16)), 3: .text(AccessDocument.elementIdentifier), 4: element])
    let mso: CBOR = ["1": "1.0", "2": "SHA-256", "3": [.text(docType): [0: .bytes(Primitives.sha256(item.encoded()))]],
                     "4": ["1": (try? CoseKey(publicKey: credentialPoint))?.cbor ?? .null], "5": .text(docType), "6": validity, "7": true]
    let auth = CoseSign1.sign(payload: CBOR.embedded(mso).encoded(), key: issuerKey,
                              kid: CoseSign1.keyIdentifier(issuerPublicKey: issuerPoint))
    let doc: CBOR = ["1": ["1": [.text(docType): [item]], "2": auth.cbor], "5": .text(docType)]
    return doc.encoded()
}

private func check(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError("promise broken: \(what())") }
}

private func checkState(_ state: EngineState) {
    if let hwm = state.clock.highWaterMark { check(RFC3339.isRepresentable(hwm), "high-water mark \(hwm.timeIntervalSince1970)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedDocument(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let input = try? CBOR(parsing: bytes), case .array(let parts) = input, parts.count >= 2 else { return 0 }
    let offset = parts.count > 2 ? Double(parts[2].intValue.map { max(-400 * 86_400, min(400 * 86_400, $0)) } ?? 0) : 0
    let now = t0.addingTimeInterval(offset)
    let document = signedDocument(element: parts[0], validity: parts[1])

    // A trusted clock.
    var state = EngineState(clock: TrustedClock(trustedAt: t0))
    let p = Presentation(credentialPublicKey: credentialPoint, transactionID: [UInt8](repeating: 1, count: 16), interface: .nfc,
                         protocolVersion: 0x0100, fast: false, accessDocuments: [document])
    let decision = core.decide(p, state: &state, at: now)
    checkState(state)
    if decision.isGrant {
        guard let doc = try? AccessDocument(parsing: document) else { fatalError("granted an undecodable document") }
        let v = doc.validity
        check(now >= v.validFrom.addingTimeInterval(-policy.clockLeeway), "granted before validFrom")
        check(now <= v.validUntil.addingTimeInterval(policy.clockLeeway), "granted after validUntil")
        check(v.validUntil.timeIntervalSince(v.validFrom) <= policy.maxDocumentLifetime, "granted a document living too long")
        // From the cache, a little later: the same rules hold.
        let later = now.addingTimeInterval(3600)
        var cached = state
        let again = core.decide(Presentation(credentialPublicKey: credentialPoint, transactionID: [UInt8](repeating: 2, count: 16),
                                             interface: .nfc, protocolVersion: 0x0100, fast: true), state: &cached, at: later)
        if again.isGrant { check(later <= v.validUntil.addingTimeInterval(policy.clockLeeway), "cache granted after validUntil") }
    }

    // After a power loss: trust may come back only within the bound.
    var untrusted = EngineState(clock: TrustedClock(highWaterMark: t0, trusted: false))
    _ = core.decide(p, state: &untrusted, at: now)
    checkState(untrusted)
    if untrusted.clock.trusted, let hwm = untrusted.clock.highWaterMark {
        check(hwm <= t0.addingTimeInterval(policy.maxDocumentLifetime + policy.clockLeeway), "trust restored \(hwm.timeIntervalSince(t0)) s past the mark")
    }
    return 0
}
