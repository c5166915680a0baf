// fuzz-module: OfflineUnlock
// libFuzzer entry for the JSON a lock reads from disk into the engine: the `policy` object of the
// lock configuration and the engine part of state.json (the state file is authenticated, but its
// decoder still must not trap on what an older LockBench or a broken disk left). The first input
// byte picks the decoder. Checks: a policy that decodes is within `LockPolicy.Bounds`; a state
// that decodes re-encodes to a state that decodes equal; and the decision engine, handed the
// decoded state, decides without trapping (a cached-credential tap, then one with a document).

import ByteCore
import Codecs
import Crypto
import Foundation

private let issuerKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32))
private let credentialKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x33, count: 32))
private let t0 = Date(timeIntervalSince1970: 1_772_442_000)
private let reader = ReaderIdentity(groupID: [UInt8](repeating: 0xA1, count: 16), subID: [UInt8](repeating: 0xB1, count: 16))
private let trust = try! TrustStore(issuerPublicKeys: [Array(issuerKey.publicKey.x963Representation)])
private let document = try! AccessDocument.issue(
    access: AccessData(id: [0xD0, 0x01], readers: [ReaderRule(groupID: reader.groupID)]),
    credentialPublicKey: Array(credentialKey.publicKey.x963Representation),
    validity: .init(signed: t0 - 3600, validFrom: t0 - 3600, validUntil: t0 + 8 * 3600), issuerKey: issuerKey).encoded()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzState(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 0 {
        guard let policy = try? JSONDecoder().decode(LockPolicy.self, from: bytes) else { return 0 }
        do { try policy.validate() } catch { fatalError("a decoded policy is out of bounds: \(error)") }
        var state = EngineState(clock: TrustedClock(trustedAt: t0))
        let p = Presentation(credentialPublicKey: Array(credentialKey.publicKey.x963Representation), transactionID: [UInt8](repeating: 1, count: 16),
                             interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: [document])
        _ = DecisionCore(reader: reader, policy: policy, trust: trust).decide(p, state: &state, at: t0)
        return 0
    }
    guard let state = try? JSONDecoder().decode(EngineState.self, from: bytes) else { return 0 }
    guard let encoded = try? JSONEncoder().encode(state), let again = try? JSONDecoder().decode(EngineState.self, from: encoded),
          again == state else { fatalError("engine state does not round-trip") }
    let core = DecisionCore(reader: reader, policy: LockPolicy(), trust: trust)
    var s = state
    core.verifyCachedDocuments(&s)
    let key = Array(credentialKey.publicKey.x963Representation)
    _ = core.wantsStepUp(credentialPublicKey: key, state: s, at: t0)
    _ = core.decide(Presentation(credentialPublicKey: key, transactionID: [UInt8](repeating: 2, count: 16), interface: .nfc,
                                 protocolVersion: 0x0100, fast: true), state: &s, at: t0)
    _ = core.decide(Presentation(credentialPublicKey: key, transactionID: [UInt8](repeating: 3, count: 16), interface: .nfc,
                                 protocolVersion: 0x0100, fast: false, accessDocuments: [document]), state: &s, at: t0 + 60)
    _ = s.takeRevocationChanges()
    return 0
}
