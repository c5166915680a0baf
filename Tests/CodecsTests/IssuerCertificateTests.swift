import ByteCore
import Codecs
import Crypto
import Foundation
import XCTest

/// The issuer certificate reader (x5chain of an access document's issuerAuth): certificates it
/// mints read back, a CA's signature is told from another key's, the official empty-key
/// certificate is refused by its byte and rule, and no cut or flipped byte traps.
final class IssuerCertificateTests: XCTestCase {
    let ca = try! Primitives.signingPrivateKey(raw: Hex.decode("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721")!)
    let issuer = try! Primitives.signingPrivateKey(raw: Hex.decode("0000297D2963C5741166C6D1CC3579EF45AB2E5798F92115AC81FE6BBDD7320E")!)
    let start = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01T00:00:00Z
    let end = Date(timeIntervalSince1970: 2_556_144_000)   // 2051-01-01T00:00:00Z: GeneralizedTime

    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/aliro-certification-tool")

    func minted() throws -> [UInt8] {
        try IssuerCertificate.issue(subjectPublicKey: issuer.publicBytes, caKey: ca, serialNumber: [0x80, 0x01],
                                    notBefore: start, notAfter: end)
    }

    func testAMintedCertificateReadsBackAndOnlyItsCASigned() throws {
        let cert = try IssuerCertificate(parsing: try minted())
        XCTAssertEqual(cert.publicKey, issuer.publicBytes)
        XCTAssertEqual(cert.notBefore, start)
        XCTAssertEqual(cert.notAfter, end)
        XCTAssertEqual(cert.serialNumber, [0x00, 0x80, 0x01])
        XCTAssertEqual(cert.issuerName, "LockBench Issuer CA")
        XCTAssertEqual(cert.subjectName, "LockBench Issuer")
        XCTAssertTrue(cert.isSigned(by: ca.publicBytes))
        XCTAssertFalse(cert.isSigned(by: issuer.publicBytes))
        XCTAssertTrue(cert.isValid(at: start))
        XCTAssertFalse(cert.isValid(at: start.addingTimeInterval(-1)))
        XCTAssertTrue(cert.isValid(at: start.addingTimeInterval(-1), leeway: 1))
        XCTAssertFalse(cert.isValid(at: end.addingTimeInterval(1)))
    }

    /// OpenSSL reads what LockBench writes (same DER a CA tool would): the fields by their offsets.
    func testTheMintedDERHasTheX509Layout() throws {
        let der = try minted()
        let top = try DER.single(der[...], tag: 0x30, "Certificate")
        let parts = try DER.elements(top.content)
        XCTAssertEqual(parts.map(\.tag), [0x30, 0x30, 0x03])
        let tbs = try DER.elements(parts[0].content)
        XCTAssertEqual(tbs.map(\.tag), [0xA0, 0x02, 0x30, 0x30, 0x30, 0x30, 0x30])
        let validity = try DER.elements(tbs[4].content)
        XCTAssertEqual(validity.map(\.tag), [0x17, 0x18])  // UTCTime, GeneralizedTime
        XCTAssertEqual(String(decoding: validity[0].content, as: UTF8.self), "200101000000Z")
        XCTAssertEqual(String(decoding: validity[1].content, as: UTF8.self), "20510101000000Z")
        XCTAssertEqual(try IssuerCertificate.der(pemOrDER: Array(IssuerCertificate.pem(der: der).utf8)), der)
    }

    /// NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EMPTY_PUBLIC_KEY's certificate, as the official case holds it.
    func testTheOfficialEmptyPublicKeyCertificateIsRefusedByItsByte() throws {
        let pem = try Data(contentsOf: Self.vectors.appendingPathComponent("issuer-cert-empty-public-key.pem"))
        let der = try IssuerCertificate.der(pemOrDER: Array(pem))
        XCTAssertEqual(der.count, 232)
        XCTAssertThrowsError(try IssuerCertificate(parsing: der)) { error in
            let e = error as! X509Error
            XCTAssertEqual(e.code, .invalidPublicKey)
            XCTAssertTrue(e.reason.contains("byte 153") && e.reason.contains("0 byte(s)"), e.reason)
        }
    }

    func testEachRefusalNamesItsRule() throws {
        let good = try minted()
        func refusal(_ bytes: [UInt8]) -> X509Error? {
            do { _ = try IssuerCertificate(parsing: bytes); return nil } catch { return error }
        }
        // Not DER: a non-minimal length (81 7F where 7F fits one byte).
        XCTAssertEqual(refusal([0x30, 0x81, 0x05, 0x02, 0x01, 0x00, 0x02, 0x00])?.code, .malformed)
        XCTAssertEqual(refusal(good + [0x00])?.code, .malformed)  // trailing byte
        XCTAssertEqual(refusal([UInt8](repeating: 0x30, count: IssuerCertificate.maxLength + 1))?.code, .malformed)
        // Another signature algorithm: ecdsa-with-SHA384 (…04 03 03) in both places.
        var sha384 = good
        for i in sha384.indices.dropLast(7) where Array(sha384[i..<(i + 8)]) == IssuerCertificate.ecdsaWithSHA256 { sha384[i + 7] = 0x03 }
        XCTAssertEqual(refusal(sha384)?.code, .unsupportedAlgorithm)
        // A key off the curve: flip the point's last byte.
        var offCurve = good
        let point = good.indices.first { Array(good[$0..<($0 + 65)]) == issuer.publicBytes }!
        offCurve[point + 64] ^= 0x01
        let e = refusal(offCurve)
        XCTAssertEqual(e?.code, .invalidPublicKey)
        XCTAssertTrue(e?.reason.contains("not a point on P-256") == true, "\(String(describing: e))")
        // A validity time that is not a calendar time: month 13.
        var month13 = good
        let t = good.indices.first { Array(good[$0..<($0 + 4)]) == Array("2001".utf8) }!
        month13[t + 2] = UInt8(ascii: "1"); month13[t + 3] = UInt8(ascii: "3")
        XCTAssertEqual(refusal(month13)?.code, .invalidTime)
    }

    /// Hostile input: every prefix and every single-byte change of a good certificate is read or
    /// refused, never a trap; a changed byte never keeps the CA's signature valid unless it is
    /// outside the signed part.
    func testNoCutOrFlippedByteTraps() throws {
        let good = try minted()
        for n in 0..<good.count { XCTAssertThrowsError(try IssuerCertificate(parsing: Array(good[..<n])), "prefix \(n)") }
        let tbs = try IssuerCertificate(parsing: good).tbs
        for i in good.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var bad = good
                bad[i] ^= flip
                if let cert = try? IssuerCertificate(parsing: bad), cert.tbs != tbs {
                    XCTAssertFalse(cert.isSigned(by: ca.publicBytes), "byte \(i) ^ \(flip) still verifies")
                }
            }
        }
    }

    /// The shared DER reader refuses what is not DER, naming the offset (a certificate's
    /// refusal then says "byte N").
    func testTheDERReaderRefusesWhatIsNotDER() throws {
        func refusal(_ bytes: [UInt8]) -> DER.Refusal? {
            do { _ = try DER.elements(bytes[...]); return nil } catch { return error }
        }
        XCTAssertEqual(try DER.elements(([0x04, 0x81, 0x80] + [UInt8](repeating: 0, count: 0x80))[...]).first?.content.count, 0x80)
        XCTAssertEqual(refusal([0x04, 0x82, 0x00, 0x05, 1, 2, 3, 4, 5]).map { "\($0.offset) \($0.reason)" }, "1 length 5 not in its shortest form (X.690 §10.1)")
        XCTAssertEqual(refusal([0x04, 0x81, 0x05, 1, 2, 3, 4, 5])?.offset, 1)
        XCTAssertEqual(refusal([0x30, 0x05, 0x02, 0x01])?.offset, 0)
        XCTAssertNotNil(refusal([0x1F, 0x01, 0x00]))
        XCTAssertNotNil(refusal([0x30]))
        XCTAssertThrowsError(try IssuerCertificate(parsing: [0x30, 0x81, 0x03, 0x02, 0x01, 0x00])) { error in
            XCTAssertTrue((error as! X509Error).reason.contains("byte 1: length 3 not in its shortest form"), "\(error)")
        }
    }

    func testX5chainIsABstrOrAnArrayOfThem() throws {
        let der = try minted()
        let payload = CBOR.embedded(["1": "1.0"]).encoded()
        let one = CoseSign1.sign(payload: payload, key: issuer, kid: nil, x5chain: der)
        XCTAssertEqual(try one.x5chain(), [der])
        XCTAssertNil(one.kid)
        var list = one
        list.unprotected[CoseSign1.Header.x5chain] = .array([.bytes(der), .bytes([0x30, 0x00])])
        XCTAssertEqual(try list.x5chain(), [der, [0x30, 0x00]])
        list.unprotected[CoseSign1.Header.x5chain] = .text("no")
        XCTAssertThrowsError(try list.x5chain()) { XCTAssertEqual(($0 as! CoseError).code, .malformed) }
        list.unprotected[CoseSign1.Header.x5chain] = .array(Array(repeating: .bytes(der), count: CoseSign1.maxChainLength + 1))
        XCTAssertThrowsError(try list.x5chain()) { XCTAssertTrue(($0 as! CoseError).reason.contains("lists 5 certificates")) }
        list.unprotected[CoseSign1.Header.x5chain] = nil
        XCTAssertEqual(try list.x5chain(), [])
    }
}
