import ByteCore
import Codecs
import Crypto
import Foundation
import XCTest

/// Wycheproof vectors run through `Primitives`, the same functions the protocol and documents use.
/// The vectors are in the repository (`Tests/Vectors/wycheproof`, with their LICENSE and
/// provenance), found from this file's path; a missing file fails the test loudly (never skipped).
enum Wycheproof {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/wycheproof")

    static func load<T: Decodable>(_ name: String, as: T.Type) throws -> T {
        let url = directory.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            XCTFail("Wycheproof vectors missing: \(url.path) (Tests/Vectors/wycheproof is part of the repository; restore it with git checkout)")
            throw CocoaError(.fileNoSuchFile)
        }
        return try JSONDecoder().decode(T.self, from: data)
    }

    struct File<Group: Decodable>: Decodable {
        var algorithm: String
        var numberOfTests: Int
        var testGroups: [Group]
    }

    /// valid / invalid / acceptable tallies, asserted at the end of every test.
    struct Tally: CustomStringConvertible {
        var valid = 0, invalid = 0, acceptableAccepted = 0, acceptableRejected = 0, notApplicable = 0
        var total: Int { valid + invalid + acceptableAccepted + acceptableRejected + notApplicable }
        var description: String {
            "valid \(valid), invalid \(invalid), acceptable \(acceptableAccepted) accepted / \(acceptableRejected) rejected, not applicable \(notApplicable)"
        }

        /// Records one case: `accepted` is what the wrapper did.
        mutating func record(result: String, accepted: Bool, id: Int, comment: String,
                             file: StaticString = #filePath, line: UInt = #line) {
            switch result {
            case "valid":
                XCTAssertTrue(accepted, "tcId \(id) (\(comment)) is valid but was rejected", file: file, line: line)
                valid += 1
            case "invalid":
                XCTAssertFalse(accepted, "tcId \(id) (\(comment)) is invalid but was accepted", file: file, line: line)
                invalid += 1
            default:
                if accepted { acceptableAccepted += 1 } else { acceptableRejected += 1 }
            }
        }
    }
}

private func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

final class WycheproofECDSATests: XCTestCase {
    struct Group: Decodable {
        struct Key: Decodable { var uncompressed: String }
        var publicKey: Key
        var publicKeyDer: String
        var sha: String
        var tests: [Case]
    }
    struct Case: Decodable { var tcId: Int; var comment: String; var msg: String; var sig: String; var result: String }

    func testP1363RawSignatures() throws {
        let file = try Wycheproof.load("ecdsa_secp256r1_sha256_p1363_test.json", as: Wycheproof.File<Group>.self)
        var tally = Wycheproof.Tally()
        for g in file.testGroups {
            XCTAssertEqual(g.sha, "SHA-256")
            for t in g.tests {
                let ok = Primitives.verifyRaw(signature: bytes(t.sig), message: bytes(t.msg), publicKey: bytes(g.publicKey.uncompressed))
                tally.record(result: t.result, accepted: ok, id: t.tcId, comment: t.comment)
            }
        }
        XCTAssertEqual(tally.total, file.numberOfTests)
        XCTAssertEqual(tally.valid, 173)
        XCTAssertEqual(tally.invalid, 89)
        print("Wycheproof ECDSA P-256 P1363: \(tally)")
    }

    func testDERSignatures() throws {
        let file = try Wycheproof.load("ecdsa_secp256r1_sha256_test.json", as: Wycheproof.File<Group>.self)
        var tally = Wycheproof.Tally()
        for g in file.testGroups {
            // The key also comes in through the SPKI path the CLI uses for PEM files.
            let point = try Primitives.publicKey(spkiDER: bytes(g.publicKeyDer))
            XCTAssertEqual(point, bytes(g.publicKey.uncompressed))
            for t in g.tests {
                let ok = Primitives.verifyDER(signature: bytes(t.sig), message: bytes(t.msg), publicKey: point)
                tally.record(result: t.result, accepted: ok, id: t.tcId, comment: t.comment)
            }
        }
        XCTAssertEqual(tally.total, file.numberOfTests)
        XCTAssertEqual(tally.valid, 174)
        XCTAssertEqual(tally.invalid, 310)
        print("Wycheproof ECDSA P-256 DER: \(tally)")
    }
}

final class WycheproofECDHTests: XCTestCase {
    struct Group: Decodable { var curve: String; var encoding: String; var tests: [Case] }
    struct Case: Decodable {
        var tcId: Int; var comment: String; var flags: [String]
        var `public`: String; var `private`: String; var shared: String; var result: String
    }

    /// Wycheproof private keys are big-endian integers, sometimes with a leading 00 or shorter.
    static func scalar(_ hex: String) -> [UInt8] {
        var b = bytes(hex)
        while b.count > 32, b.first == 0 { b.removeFirst() }
        while b.count < 32 { b.insert(0, at: 0) }
        return b
    }

    func run(_ name: String, publicKey: (String) throws -> [UInt8]) throws -> Wycheproof.Tally {
        let file = try Wycheproof.load(name, as: Wycheproof.File<Group>.self)
        var tally = Wycheproof.Tally()
        for g in file.testGroups {
            XCTAssertEqual(g.curve, "secp256r1")
            for t in g.tests {
                var shared: [UInt8]? = nil
                if let point = try? publicKey(t.public) {
                    let priv = try Primitives.agreementPrivateKey(raw: Self.scalar(t.private))
                    shared = try? Primitives.ecdh(privateKey: priv, peerPublicKey: point)
                }
                if let shared { XCTAssertEqual(shared.hex, t.shared, "tcId \(t.tcId)") }
                tally.record(result: t.result, accepted: shared != nil && shared!.hex == t.shared, id: t.tcId, comment: t.comment)
            }
        }
        XCTAssertEqual(tally.total, file.numberOfTests)
        return tally
    }

    /// Public keys as raw points: the wire form of AUTH0/AUTH1 (`04‖X‖Y`).
    func testECPointEncoding() throws {
        let tally = try run("ecdh_secp256r1_ecpoint_test.json") { bytes($0) }
        XCTAssertEqual(tally.valid, 330)
        XCTAssertEqual(tally.invalid, 24)
        // The one acceptable case is a compressed point: LockBench only speaks uncompressed points.
        XCTAssertEqual(tally.acceptableRejected, 1)
        print("Wycheproof ECDH ecpoint: \(tally)")
    }

    /// Public keys as DER SPKI: the form of PEM public key files.
    func testSPKIEncoding() throws {
        let tally = try run("ecdh_secp256r1_test.json") { try Primitives.publicKey(spkiDER: bytes($0)) }
        XCTAssertEqual(tally.valid, 330)
        XCTAssertEqual(tally.invalid, 52)
        // Acceptable cases (explicit curve parameters, BER, compressed points) are all refused:
        // only the DER named-curve form of an uncompressed point is a LockBench public key.
        XCTAssertEqual(tally.acceptableRejected, 230)
        print("Wycheproof ECDH SPKI: \(tally)")
    }
}

final class WycheproofAESGCMTests: XCTestCase {
    struct Group: Decodable { var keySize: Int; var ivSize: Int; var tagSize: Int; var tests: [Case] }
    struct Case: Decodable {
        var tcId: Int; var comment: String; var key: String; var iv: String; var aad: String
        var msg: String; var ct: String; var tag: String; var result: String
    }

    /// LockBench uses AES-256-GCM with 96-bit nonces and 128-bit tags. Those groups run fully
    /// (seal must reproduce valid cases, open must accept valid and reject invalid); every other
    /// size is counted as not applicable after asserting the wrapper refuses it.
    func testAESGCM() throws {
        let file = try Wycheproof.load("aes_gcm_test.json", as: Wycheproof.File<Group>.self)
        var tally = Wycheproof.Tally()
        for g in file.testGroups {
            for t in g.tests {
                let key = bytes(t.key), iv = bytes(t.iv), aad = bytes(t.aad)
                let sealed = bytes(t.ct) + bytes(t.tag)
                if g.keySize == 256 && g.ivSize == 96 && g.tagSize == 128 {
                    let opened = try? Primitives.open(key: key, nonce: iv, sealed: sealed, aad: aad)
                    if t.result == "valid" {
                        XCTAssertEqual(opened?.hex, t.msg, "tcId \(t.tcId)")
                        XCTAssertEqual(try Primitives.seal(key: key, nonce: iv, plaintext: bytes(t.msg), aad: aad), sealed, "tcId \(t.tcId)")
                    }
                    tally.record(result: t.result, accepted: opened?.hex == t.msg, id: t.tcId, comment: t.comment)
                } else {
                    XCTAssertThrowsError(try Primitives.open(key: key, nonce: iv, sealed: sealed, aad: aad)) { error in
                        XCTAssertEqual((error as? PrimitiveError)?.code, .unsupportedParameter, "tcId \(t.tcId)")
                    }
                    XCTAssertThrowsError(try Primitives.seal(key: key, nonce: iv, plaintext: bytes(t.msg), aad: aad))
                    tally.notApplicable += 1
                }
            }
        }
        XCTAssertEqual(tally.total, file.numberOfTests)
        XCTAssertEqual(tally.valid, 39)
        XCTAssertEqual(tally.invalid, 27)
        XCTAssertEqual(tally.notApplicable, 250)
        print("Wycheproof AES-GCM: \(tally)")
    }
}

final class WycheproofHKDFTests: XCTestCase {
    struct Group: Decodable { var tests: [Case] }
    struct Case: Decodable {
        var tcId: Int; var comment: String; var ikm: String; var salt: String; var info: String
        var size: Int; var okm: String; var result: String
    }

    func testHKDFSHA256() throws {
        let file = try Wycheproof.load("hkdf_sha256_test.json", as: Wycheproof.File<Group>.self)
        var tally = Wycheproof.Tally()
        for g in file.testGroups {
            for t in g.tests {
                let okm = try? Primitives.hkdf(ikm: bytes(t.ikm), salt: bytes(t.salt), info: bytes(t.info), length: t.size)
                tally.record(result: t.result, accepted: okm?.hex == t.okm, id: t.tcId, comment: t.comment)
            }
        }
        XCTAssertEqual(tally.total, file.numberOfTests)
        XCTAssertEqual(tally.valid, 83)
        XCTAssertEqual(tally.invalid, 3)
        print("Wycheproof HKDF-SHA256: \(tally)")
    }
}

/// X9.63 KDF has no Wycheproof file; these are the ANSI X9.63 SHA-256 vectors from NIST CAVS
/// (ansx963_2001.rsp, [SHA-256] shared secret length 192, shared info 0 and 128 bits).
final class X963KDFTests: XCTestCase {
    func testCAVSVectors() {
        XCTAssertEqual(Primitives.x963KDF(sharedSecret: bytes("96c05619d56c328ab95fe84b18264b08725b85e33fd34f08"),
                                          sharedInfo: [], length: 16).hex,
                       "443024c3dae66b95e6f5670601558f71")
        XCTAssertEqual(Primitives.x963KDF(sharedSecret: bytes("22518b10e70f2a3f243810ae3254139efbee04aa57c7af7d"),
                                          sharedInfo: bytes("75eef81aa3041e33b80971203d2c0c52"), length: 128).hex,
                       "c498af77161cc59f2962b9a713e2b215152d139766ce34a776df11866a69bf2e52a13d9c7c6fc878c50c5ea0bc7b00e0da2447cfd874f6cf92f30d0097111485500c90c3af8b487872d04685d14c8d1dc8d7fa08beb0ce0ababc11f0bd496269142d43525a78e5bc79a17f59676a5706dc54d54d4d1f0bd7e386128ec26afc21")
    }

    /// The same KDF through swift-crypto's own X9.63 implementation on a real ECDH secret.
    func testMatchesSwiftCryptoX963() throws {
        let a = P256.KeyAgreement.PrivateKey(), b = P256.KeyAgreement.PrivateKey()
        let secret = try a.sharedSecretFromKeyAgreement(with: b.publicKey)
        let info: [UInt8] = Array(0..<16)
        let theirs = secret.x963DerivedSymmetricKey(using: SHA256.self, sharedInfo: info, outputByteCount: 32)
        let z = try Primitives.ecdh(privateKey: a, peerPublicKey: Primitives.point(of: b))
        XCTAssertEqual(Primitives.x963KDF(sharedSecret: z, sharedInfo: info, length: 32), theirs.withUnsafeBytes { Array($0) })
    }
}
