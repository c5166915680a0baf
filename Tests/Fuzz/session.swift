// fuzz-module: AccessProtocol
// fuzz-link: OfflineUnlock
// libFuzzer entry for the lock's reader side against a hostile phone (issue 9 §1.2): the lock's
// `LockReader.drive` runs a `ReaderSession` with the real decision engine over a link whose every
// answer comes from the input. Input: 4 bytes choose the transaction bounds (within
// `TransactionLimits.Bounds`, small so they are reached), the radio and FAST; then answers as
// [len][len bytes] (len 0xFF: the phone leaves — the link throws). When the input runs out the
// phone answers `61 00` forever, the attack issue 9 found. Checks: every session ends, within the
// bounds (commands, 61xx response parts, bytes received), and a session cut off by a bound before
// the decision is a `transaction_limit` deny.

import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

private let t0 = Date(timeIntervalSince1970: 1_772_442_000)
private let groupID = [UInt8](repeating: 0xA1, count: 16), subID = [UInt8](repeating: 0xB1, count: 16)
private let identity = ReaderSigningIdentity(signingKey: try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x22, count: 32)),
                                      groupID: groupID, subID: subID)
private let issuerKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32))
private let trust = try! TrustStore(issuerPublicKeys: [Array(issuerKey.publicKey.x963Representation)])

private struct PhoneLeft: Error {}

/// The fuzz-driven phone: answers from the input, then `61 00` for ever.
private final class FuzzPhone: APDUTransceiver {
    var input: ArraySlice<UInt8>
    var commands = 0, parts = 0, bytes = 0, largest = 0
    init(_ input: ArraySlice<UInt8>) { self.input = input }
    func transceive(_ command: [UInt8]) throws -> [UInt8] {
        commands += 1
        guard commands < 100_000 else { fatalError("the reader sent 100 000 commands: no bound held") }
        var answer: [UInt8] = [0x61, 0x00]
        if let n = input.popFirst() {
            if n == 0xFF { throw PhoneLeft() }
            answer = Array(input.prefix(Int(n)))
            input = input.dropFirst(Int(n))
        }
        bytes += answer.count
        largest = max(largest, answer.count)
        if answer.count >= 2, answer[answer.count - 2] == 0x61 { parts += 1 }
        return answer
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 4 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = TransactionLimits(maxCommands: 8 + Int(input[0] % 57), maxResponseParts: 1 + Int(input[1] % 32),
                                   maxBytes: 1024 + Int(input[2]) * 16, maxDuration: 300)
    var configuration = ReaderConfiguration(identity: identity, supportedVersions: [ProtocolVersion.v1_0],
                                            interface: input[3] & 1 == 0 ? .nfc : .ble, useFast: input[3] & 2 != 0)
    configuration.stepUpSelect = input[3] & 4 == 0 ? .whenAsked : .always
    let engine = OfflineUnlockEngine(core: DecisionCore(reader: OfflineUnlock.ReaderIdentity(groupID: groupID, subID: subID), policy: LockPolicy(), trust: trust),
                                     state: EngineState(clock: TrustedClock(trustedAt: t0)), now: { t0 })
    let reader = LockReader(configuration: configuration, decider: engine)
    reader.limits = limits
    let phone = FuzzPhone(input[4...])
    let outcome = reader.runTransaction(over: phone, at: t0)
    guard phone.commands <= limits.maxCommands else { fatalError("\(phone.commands) commands past the bound \(limits.maxCommands)") }
    guard phone.parts <= limits.maxResponseParts + 1 else { fatalError("\(phone.parts) response parts past the bound \(limits.maxResponseParts)") }
    guard phone.bytes <= limits.maxBytes + phone.largest else { fatalError("\(phone.bytes) bytes past the bound \(limits.maxBytes)") }
    guard outcome.timings.commands == phone.commands else { fatalError("outcome counts \(outcome.timings.commands) commands, the phone saw \(phone.commands)") }
    if case .deny(let refusal) = outcome.decision, refusal.detail.hasPrefix("transaction cut off"),
       refusal.reason != .transport(.transactionLimit) {
        fatalError("cut off by a bound but denied \(refusal.code)")
    }
    return 0
}
