import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
@testable import OfflineUnlock
import XCTest

/// The official RevocationData (`support/access_doc/aliro/revocation/revocation_data.py` @
/// 26c6ded0, `revocation_entry.py` @ 0ca412be): change mode OVERWRITE/APPEND, entries to remove,
/// entries without expiry; and the lock applying an issuer's lists in signed order.
final class RevocationDataTests: XCTestCase {
    let f = Fixture()
    let now = Fixture.t0
    var hash1: [UInt8] { RevocationEntry.hash(credentialPublicKey: Hex.decode(CredentialKeyListTests.caseKey1)!) }
    var hash2: [UInt8] { RevocationEntry.hash(credentialPublicKey: Hex.decode(CredentialKeyListTests.caseKey2)!) }

    /// A revocation document around `data` as given (any CBOR), signed by the fixture's issuer at `signed`.
    func document(_ data: CBOR, signed: Date? = nil, element: String = RevocationDocument.elementIdentifier) -> [UInt8] {
        let signed = signed ?? now.addingTimeInterval(-60)
        return IssuedDocument.issue(docType: IssuedDocument.DocType.revocation, elementIdentifier: element, elementValue: data, deviceKey: nil,
                                    validity: .init(signed: signed, validFrom: signed, validUntil: now.addingTimeInterval(14 * 86_400)),
                                    issuerKey: f.issuer).encoded()
    }

    /// Written as the official tool's `to_dict` writes it: empty lists left out, an entry with
    /// only a key hash (no expiry), an expiry as tag 1; key 4 (extensions) and an unknown key skipped.
    func testTheOfficialShapeParses() throws {
        let official: CBOR = [0: 1, 1: 1, 2: [[0: .bytes(hash1)]],
                              3: [[0: .bytes(hash2), 2: .tagged(1, .int(Int(now.timeIntervalSince1970)))], [1: .bytes([0, 1, 2, 3, 4])]],
                              4: [.text("vendor"): [[1, 0, .bytes([9])]]], 99: .text("unknown")]
        let doc = try RevocationDocument(parsing: document(official, element: "floor1"))
        XCTAssertEqual(doc.revocation.changeMode, .append)
        XCTAssertEqual(doc.revocation.entries, [try RevocationEntry(publicKeyHash: hash1, expiry: nil)])
        XCTAssertEqual(doc.revocation.entriesToRemove, [try RevocationEntry(publicKeyHash: hash2, expiry: now),
                                                        try RevocationEntry(documentID: [0, 1, 2, 3, 4], expiry: nil)])
        // LockBench writes what the tool writes: version 1, the mode, no empty lists, tag 1 expiries.
        let written = RevocationData(changeMode: .overwrite, entries: [try RevocationEntry(publicKeyHash: hash1, expiry: now)]).cbor
        XCTAssertEqual(written, [0: 1, 1: 0, 2: [[0: .bytes(hash1), 2: .tagged(1, .int(Int(now.timeIntervalSince1970)))]]])
        XCTAssertEqual(RevocationData(changeMode: .overwrite, entries: []).cbor, [0: 1, 1: 0])
        // An expiry written as tag 0 (LockBench's lists before) still reads.
        let tag0: CBOR = [0: 1, 1: 0, 2: [[1: .bytes([7]), 2: .dateTime(now)]]]
        XCTAssertEqual(try RevocationData(cbor: tag0).entries.first?.expiry, now)
    }

    /// Each refusal names the key and the rule.
    func testEachRefusalNamesTheKeyAndTheRule() {
        func refusal(_ data: CBOR) -> DocumentError? {
            do { _ = try RevocationData(cbor: data); return nil } catch { return error }
        }
        let cases: [(CBOR, DocumentError.Code, String)] = [
            ([0: 42, 1: 0], .unsupportedVersion, "version 42 (key 0)"),       // NFC_RDR_NEG_STEPUP_RD_INVALID_ELEMENT_VERSION
            ([1: 0], .malformed, "key 0"),
            ([0: 1], .malformed, "key 1"),
            ([0: 1, 1: 2], .malformed, "change mode (key 1) is 2"),
            ([0: 1, 1: .text("append")], .malformed, "change mode (key 1)"),
            ([0: 1, 1: 0, 2: .bytes([1])], .malformed, "entries (key 2)"),
            ([0: 1, 1: 0, 3: [[2: .tagged(1, 5)]]], .malformed, "names a public-key hash (key 0), a document id (key 1), or both"),
            ([0: 1, 1: 0, 2: [[0: .bytes([1, 2])]]], .malformed, "must be 32 bytes"),
            ([0: 1, 1: 0, 2: [[1: .bytes([UInt8](repeating: 1, count: 17))]]], .malformed, "1–16 bytes, got 17"),
            ([0: 1, 1: 0, 2: [[1: .bytes([1]), 2: .tagged(1, .int(0x1_0000_0000))]]], .malformed, "outside 0…2^32 − 1"),
            ([0: 1, 1: 0, 2: [[1: .bytes([1]), 2: .int(5)]]], .malformed, "entry expiry (key 2)"),
        ]
        for (data, code, words) in cases {
            let e = refusal(data)
            XCTAssertEqual(e?.code, code, "\(data.diagnostic): \(String(describing: e))")
            XCTAssertTrue(e?.reason.contains(words) ?? false, "\(data.diagnostic): \(e?.reason ?? "accepted")")
        }
    }

    /// The six iterations of NFC_RDR_STEPUP_RD (nfc_reader/nfc_rdr_stepup_rd/nfc_rdr_stepup_rd.py
    /// @ 0b6dfe1d) at the engine: two keys trusted without a document, six lists all signed in
    /// the same second, each followed by a tap of each key.
    func testTheSixIterationsOfTheOfficialCase() throws {
        let key1 = Hex.decode(CredentialKeyListTests.caseKey1)!, key2 = Hex.decode(CredentialKeyListTests.caseKey2)!
        var trust = f.trust()
        trust.credentialKeys = try CredentialKeyList(keys: [key1, key2, f.credentialKey])
        var state = EngineState(clock: TrustedClock(trustedAt: now.addingTimeInterval(-60)))
        func decide(_ p: Presentation) -> Decision { DecisionCore(reader: f.reader, policy: f.policy, trust: trust).decide(p, state: &state, at: now) }
        let e1 = try RevocationEntry(publicKeyHash: hash1, expiry: nil), e2 = try RevocationEntry(publicKeyHash: hash2, expiry: nil)
        let iterations: [(RevocationData, Bool, Bool)] = [
            (RevocationData(changeMode: .overwrite, entries: [e1]), false, true),
            (RevocationData(changeMode: .append, entries: [e2]), false, false),
            (RevocationData(changeMode: .append, entries: [], entriesToRemove: [e1]), true, false),
            (RevocationData(changeMode: .append, entries: [e1], entriesToRemove: [e1, e2]), true, true),
            (RevocationData(changeMode: .overwrite, entries: [e2]), true, false),
            (RevocationData(changeMode: .overwrite, entries: []), true, true),
        ]
        let second = now.addingTimeInterval(-30)
        for (n, (data, grant1, grant2)) in iterations.enumerated() {
            // The carrier (the case's P0, a key the lock trusts) holds only the revocation document.
            XCTAssertTrue(decide(f.presentation(revocation: [document(data.cbor, signed: second)])).isGrant, "iteration \(n + 1): the carrier")
            XCTAssertEqual(decide(f.presentation(key: key1)).isGrant, grant1, "iteration \(n + 1): key 1")
            XCTAssertEqual(decide(f.presentation(key: key2)).isGrant, grant2, "iteration \(n + 1): key 2")
        }
    }

    /// A list signed before the last one applied changes nothing, in either mode (issue 20: an
    /// older list never replaces a newer one); the same second applies, in arrival order.
    func testAnEarlierSignedListIsIgnored() throws {
        var trust = f.trust()
        let key1 = Hex.decode(CredentialKeyListTests.caseKey1)!
        trust.credentialKeys = try CredentialKeyList(keys: [key1, f.credentialKey])
        var state = EngineState(clock: TrustedClock(trustedAt: now.addingTimeInterval(-60)))
        func decide(_ p: Presentation) -> Decision { DecisionCore(reader: f.reader, policy: f.policy, trust: trust).decide(p, state: &state, at: now) }
        let e1 = try RevocationEntry(publicKeyHash: hash1, expiry: nil)
        _ = decide(f.presentation(revocation: [document(RevocationData(changeMode: .overwrite, entries: [e1]).cbor, signed: now.addingTimeInterval(-10))]))
        XCTAssertEqual(decide(f.presentation(key: key1)).denyReason, .revoked)
        for mode in RevocationData.ChangeMode.allCases {
            let older = RevocationData(changeMode: mode, entries: [], entriesToRemove: [e1])
            _ = decide(f.presentation(revocation: [document(older.cbor, signed: now.addingTimeInterval(-11))]))
            XCTAssertEqual(decide(f.presentation(key: key1)).denyReason, .revoked, "\(mode), signed a second before the held list")
        }
        XCTAssertEqual(state.takeRevocationChanges().count, 1, "only the first list changed anything")
        _ = decide(f.presentation(revocation: [document(RevocationData(changeMode: .overwrite, entries: []).cbor, signed: now.addingTimeInterval(-10))]))
        XCTAssertTrue(decide(f.presentation(key: key1)).isGrant, "a list of the same second applies")
        XCTAssertEqual(state.takeRevocationChanges().map(\.removedEntries), [1])
    }

    /// APPEND grows a list: past its bound the document is refused and the list stays as it was.
    func testAnAppendPastTheBoundIsRefused() throws {
        var lists = RevocationLists()
        let many = try (0..<RevocationLists.maxEntriesPerIssuer).map { i in
            try RevocationEntry(documentID: [UInt8(i >> 8), UInt8(i & 0xFF), 1], expiry: nil)
        }
        XCTAssertNotNil(try lists.apply(RevocationData(changeMode: .overwrite, entries: many), signed: now, issuer: "a"))
        XCTAssertThrowsError(try lists.apply(RevocationData(changeMode: .append, entries: [try RevocationEntry(documentID: [9], expiry: nil)]),
                                             signed: now.addingTimeInterval(1), issuer: "a")) {
            XCTAssertTrue(($0 as? DocumentError)?.reason.contains("at most \(RevocationLists.maxEntriesPerIssuer)") ?? false, "\($0)")
        }
        XCTAssertEqual(lists["a"]?.entries.count, RevocationLists.maxEntriesPerIssuer)
        XCTAssertEqual(lists["a"]?.issued, now)
        // Entries without an expiry are never pruned; an expired one is.
        XCTAssertNotNil(try lists.apply(RevocationData(changeMode: .overwrite, entries: [try RevocationEntry(documentID: [1], expiry: nil),
                                                                                          try RevocationEntry(documentID: [2], expiry: now)]),
                                        signed: now.addingTimeInterval(2), issuer: "a"))
        XCTAssertEqual(lists.prune(before: now.addingTimeInterval(10)).map(\.removedEntries), [1])
        XCTAssertEqual(lists["a"]?.entries.map(\.documentID), [[1]])
    }

    /// A lock's state written when lists had a serial still loads; the serial is dropped.
    func testAHeldListWithASerialStillLoads() throws {
        let json = #"{"serial":9,"issued":0,"entries":[{"documentID":"0102","expiry":"2026-03-02T09:00:00Z"}]}"#
        let list = try JSONDecoder().decode(IssuerRevocationList.self, from: Data(json.utf8))
        XCTAssertEqual(list.entries, [try RevocationEntry(documentID: [1, 2], expiry: RFC3339.parse("2026-03-02T09:00:00Z"))])
        let again = try JSONDecoder().decode(IssuerRevocationList.self, from: JSONEncoder().encode(list))
        XCTAssertEqual(again, list)
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(list), as: UTF8.self).contains("serial"))
    }
}
