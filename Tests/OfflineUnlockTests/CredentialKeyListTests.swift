import ByteCore
import Codecs
import Foundation
@testable import OfflineUnlock
import XCTest

/// The lock's out-of-band credential keys (`trustedCredentialKeys`): the file's rules, and the
/// engine granting such a key on AUTH1 alone unless a revocation list names its hash.
final class CredentialKeyListTests: XCTestCase {
    /// The two extra phones of the official NFC_RDR_STEPUP_RD (`access_credential1_PuBK`,
    /// `access_credential2_PuBK`, nfc_reader/nfc_rdr_stepup_rd/nfc_rdr_stepup_rd.py @
    /// 0b6dfe1ddb7424f5c3c645b24d1b17e67b4fa464).
    static let caseKey1 = "0400ADBB74BBBB7E06B0A28C7D049B023796CD0F7CB9E279EC42ECFE6E415842451EB93AC5BF62D25CC1DAEA898A82B18BD813A061E21CB58B3CA93DA6DC7EC300"
    static let caseKey2 = "046E8C3B82EDE61B910EB76711011DBDD3277F91D12ACD36C311BE743E726E176FED5565986D099C83C10F61C1962D10F94ADAD2D6F114B89E82EC350BB169664B"

    func testTheCaseKeysParseWithCommentsAndBlankLines() throws {
        let list = try CredentialKeyList(parsing: "# NFC_RDR_STEPUP_RD\n\n\(Self.caseKey1)  # phone 1\n  \(Self.caseKey2.lowercased())\n\(Self.caseKey1)\n")
        XCTAssertEqual(list.keys.map { Hex.encode($0).uppercased() }, [Self.caseKey1, Self.caseKey2], "duplicates are kept once")
        XCTAssertTrue(list.contains(Hex.decode(Self.caseKey2)!))
        XCTAssertEqual(try CredentialKeyList(parsing: list.encoded()), list)
        XCTAssertTrue(CredentialKeyList.credentialID(list.keys[0]).hasPrefix("trusted-key:"))
    }

    func testEachRefusalNamesTheLineAndTheRule() {
        func refusal(_ text: String) -> CredentialKeyList.Refusal? {
            do { _ = try CredentialKeyList(parsing: text); return nil } catch { return error }
        }
        XCTAssertEqual(refusal("\(Self.caseKey1)\nzz\n")?.line, 2)
        XCTAssertTrue(refusal("zz")?.message.contains("not hex") ?? false)
        let short = refusal("04" + String(repeating: "11", count: 32))
        XCTAssertEqual(short?.line, 1)
        XCTAssertTrue(short?.message.contains("33 bytes") ?? false, "\(String(describing: short))")
        let compressed = refusal("02" + String(repeating: "11", count: 64))
        XCTAssertTrue(compressed?.message.contains("starting 02") ?? false, "\(String(describing: compressed))")
        let offCurve = refusal("04" + String(repeating: "00", count: 64))
        XCTAssertTrue(offCurve?.message.contains("not a point on P-256") ?? false, "\(String(describing: offCurve))")
        let big = refusal(String(repeating: "#", count: CredentialKeyList.maxBytes + 1))
        XCTAssertNil(big?.line)
        XCTAssertTrue(big?.message.contains("at most \(CredentialKeyList.maxBytes)") ?? false)
        // More keys than the bound: distinct valid points, one more than allowed.
        let keys = (0...CredentialKeyList.maxKeys).map { i -> String in
            Hex.encode(Primitives.point(of: try! Primitives.signingPrivateKey(raw: [UInt8](repeating: 0, count: 29) + [1, UInt8(i >> 8), UInt8(i & 0xFF)])))
        }
        let tooMany = refusal(keys.joined(separator: "\n"))
        XCTAssertEqual(tooMany?.line, CredentialKeyList.maxKeys + 1)
        XCTAssertTrue(tooMany?.message.contains("more than \(CredentialKeyList.maxKeys)") ?? false)
    }

    func testTheEngineGrantsATrustedKeyOnAUTH1AloneUntilRevoked() throws {
        var f = Fixture()
        let now = Fixture.t0
        var state = EngineState(clock: TrustedClock(trustedAt: now.addingTimeInterval(-60)))
        var trust = f.trust()
        trust.credentialKeys = try CredentialKeyList(keys: [f.credentialKey])
        func decide(_ p: Presentation) -> Decision { DecisionCore(reader: f.reader, policy: f.policy, trust: trust).decide(p, state: &state, at: now) }
        let d = decide(f.presentation())
        XCTAssertEqual(d, .grant(credentialID: CredentialKeyList.credentialID(f.credentialKey)))
        XCTAssertEqual(decide(f.presentation(key: Primitives.point(of: f.otherCredential))).denyReason, .unknownCredential)
        // A revocation list naming the key's hash refuses it, one without lifts it.
        let entry = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: f.credentialKey), expiry: now.addingTimeInterval(86_400))
        let revoked = decide(f.presentation(revocation: [f.revocationDocument(order: 1, entries: [entry])]))
        XCTAssertEqual(revoked.denyReason, .revoked)
        if case .deny(_, let detail) = revoked { XCTAssertTrue(detail.contains("revoked by its key hash"), detail) }
        XCTAssertEqual(decide(f.presentation()).denyReason, .revoked, "the list stays with the lock")
        XCTAssertTrue(decide(f.presentation(revocation: [f.revocationDocument(order: 2, entries: [])])).isGrant)
        // A document bound to the key still decides by itself (here: another reader's).
        f.policy = LockPolicy()
        let elsewhere = f.accessDocument(readers: [try ReaderRule(groupID: [UInt8](repeating: 0xEE, count: 16))])
        XCTAssertEqual(decide(f.presentation(access: [elsewhere])).denyReason, .wrongReader)
    }
}
