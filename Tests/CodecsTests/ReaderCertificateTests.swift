import ByteCore
import Codecs
import Crypto
import Foundation
import XCTest

/// The official reader certificates (Tests/Vectors/aliro-reader-certificates, with provenance):
/// X.509 → compressed → X.509 byte for byte, verification under the tool's reader issuer key, and
/// one test per refusal.
final class ReaderCertificateTests: XCTestCase {
    struct Vectors: Decodable {
        struct Certificate: Decodable {
            var name: String
            var x509: String
            var readerPrivateKey: String?
            var subjectPublicKey: String
            var verifiesUnderIssuer: Bool
        }
        var readerIssuerPublicKey: String
        var certificates: [Certificate]
    }

    static func vectors() throws -> Vectors {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/aliro-reader-certificates/vectors.json")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            XCTFail("vectors missing: \(url.path)")
            throw CocoaError(.fileNoSuchFile)
        }
        return try JSONDecoder().decode(Vectors.self, from: data)
    }

    let issuer = Hex.decode("043928f322019d4757893bde6a0fe5e13e3e537b9ca0f549c0bd2f40f79060252a0a4f291192157a95cb6eb202759428c00cd834998c5d0eab192ee8873c5d34ee")!
    let now = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09

    func testOfficialCertificatesSurviveCompressionAndVerifyAsTheToolSays() throws {
        let v = try Self.vectors()
        XCTAssertEqual(v.certificates.count, 4)
        for c in v.certificates {
            let der = try XCTUnwrap(Hex.decode(c.x509))
            let cert = try ReaderCertificate(parsingX509: der)
            XCTAssertEqual(cert.subjectPublicKey, Hex.decode(c.subjectPublicKey), c.name)
            let compressed = cert.compressed()
            let back = try ReaderCertificate(parsingCompressed: compressed)
            XCTAssertEqual(back, cert, c.name)
            XCTAssertEqual(cert.isSigned(by: issuer), c.verifiesUnderIssuer, c.name)
            if c.verifiesUnderIssuer {
                // The rebuilt X.509 (authority key id from the CA's key) is the official one, byte for byte.
                XCTAssertEqual(back.x509(issuerPublicKey: issuer), der, c.name)
                XCTAssertNoThrow(try back.verify(issuerPublicKey: issuer, at: now), c.name)
            } else {
                XCTAssertThrowsError(try back.verify(issuerPublicKey: issuer, at: now), c.name) { error in
                    XCTAssertEqual((error as? ReaderCertificateError)?.code, .untrusted, c.name)
                }
            }
            if let priv = c.readerPrivateKey {
                let key = try P256.Signing.PrivateKey(rawRepresentation: XCTUnwrap(Hex.decode(priv)))
                XCTAssertEqual(Primitives.point(of: key), cert.subjectPublicKey, "\(c.name): the case's reader key is the certificate's subject")
            }
        }
    }

    func testChainingCertificateIsLongerThanOneAPDU() throws {
        let v = try Self.vectors()
        let chaining = try ReaderCertificate(parsingX509: XCTUnwrap(Hex.decode(v.certificates[0].x509)))
        let short = try ReaderCertificate(parsingX509: XCTUnwrap(Hex.decode(v.certificates[1].x509)))
        // The chaining certificate carries serial, names and validity: its compressed form with
        // the AUTH1 TLVs needs a command chain; the default-profile one fits one APDU.
        XCTAssertGreaterThan(chaining.compressed().count + 3 + 66 + 4, 255)
        XCTAssertLessThan(short.compressed().count + 3 + 66 + 4, 255)
        XCTAssertEqual(Array(short.compressed().prefix(7)), [0x30, 0x81, UInt8(short.compressed().count - 3), 0x04, 0x02, 0x00, 0x00])
    }

    func testIssuedCertificateVerifiesOnlyUnderItsCA() throws {
        let ca = P256.Signing.PrivateKey(), other = P256.Signing.PrivateKey(), reader = P256.Signing.PrivateKey()
        let cert = try ReaderCertificate.issue(subjectPublicKey: Primitives.point(of: reader), issuerKey: ca,
                                               serialNumber: [0x80, 0x01], issuer: "LockBench CA", subject: "front door",
                                               notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(3600))
        let parsed = try ReaderCertificate(parsingCompressed: cert.compressed())
        XCTAssertNoThrow(try parsed.verify(issuerPublicKey: Primitives.point(of: ca), at: now))
        // The X.509 it stands for parses back to the same certificate.
        XCTAssertEqual(try ReaderCertificate(parsingX509: parsed.x509(issuerPublicKey: Primitives.point(of: ca))), parsed)
        XCTAssertThrowsError(try parsed.verify(issuerPublicKey: Primitives.point(of: other), at: now)) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .untrusted)
        }
        XCTAssertThrowsError(try parsed.verify(issuerPublicKey: Primitives.point(of: ca), at: now.addingTimeInterval(7200))) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .expired)
        }
        XCTAssertThrowsError(try parsed.verify(issuerPublicKey: Primitives.point(of: ca), at: now.addingTimeInterval(-120))) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .expired)
        }
        // UTCTime's two-digit years: nothing past 2049 is issued (it would read as 19xx/20xx wrongly).
        XCTAssertThrowsError(try ReaderCertificate.issue(subjectPublicKey: Primitives.point(of: reader), issuerKey: ca, notBefore: now,
                                                         notAfter: now.addingTimeInterval(40 * 365 * 86_400))) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .validity)
        }
    }

    /// The official corruptions: bytes [5] and [6] set to FF (INCORRECT_FORMAT, UD-NFC-AUTH1-1.1)
    /// breaks the profile; byte [6] minus 1 (UD-NFC-AUTH1-4.1) breaks the structure.
    func testOfficialCorruptionsAreRefused() throws {
        let v = try Self.vectors()
        let good = try ReaderCertificate(parsingX509: XCTUnwrap(Hex.decode(v.certificates[1].x509))).compressed()
        var ff = good
        ff[5] = 0xFF; ff[6] = 0xFF
        XCTAssertThrowsError(try ReaderCertificate(parsingCompressed: ff)) { XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .profile) }
        var minus = good
        minus[6] &-= 1
        XCTAssertThrowsError(try ReaderCertificate(parsingCompressed: minus))
    }

    func testEachRefusalOfTheCompressedForm() throws {
        let v = try Self.vectors()
        let cert = try ReaderCertificate(parsingX509: XCTUnwrap(Hex.decode(v.certificates[1].x509)))
        func refused(_ bytes: [UInt8], _ code: ReaderCertificateError.Code, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try ReaderCertificate(parsingCompressed: bytes), file: file, line: line) {
                XCTAssertEqual(($0 as? ReaderCertificateError)?.code, code, "\($0)", file: file, line: line)
            }
        }
        let key = DER.encode(0x85, [0x00] + cert.subjectPublicKey), sig = DER.encode(0x86, [0x00] + cert.signature)
        func wrap(_ fields: [[UInt8]], profile: [UInt8] = [0, 0]) -> [UInt8] {
            DER.sequence([DER.encode(0x04, profile), DER.sequence(fields)])
        }
        XCTAssertEqual(try ReaderCertificate(parsingCompressed: wrap([key, sig])), cert)
        refused([UInt8](repeating: 0x30, count: 600), .tooLong)
        refused(Array(cert.compressed().dropLast()), .format)                           // truncated
        refused(wrap([key, sig], profile: [0, 1]), .profile)
        refused(wrap([sig]), .publicKey)                                                // no [5]
        refused(wrap([key]), .signature)                                                // no [6]
        refused(wrap([sig, key]), .format)                                              // out of order
        refused(wrap([key, key, sig]), .format)                                         // repeated
        refused(wrap([DER.encode(0x87, [1]), key, sig]), .format)                       // unknown field
        refused(wrap([DER.encode(0x85, [0x00, 0x04] + [UInt8](repeating: 1, count: 10)), sig]), .publicKey)
        refused(wrap([key, DER.encode(0x86, [0x01, 0x30, 0x00])]), .signature)
        refused(wrap([DER.encode(0x80, [UInt8](repeating: 1, count: 21)), key, sig]), .format)   // serial > 20
        refused(wrap([DER.encode(0x80, [0x00, 0x05]), key, sig]), .format)                       // serial not minimal
        refused(wrap([DER.encode(0x80, []), key, sig]), .format)                                 // serial empty
        refused(wrap([DER.encode(0x81, [UInt8](repeating: 0x41, count: 33)), key, sig]), .format) // issuer > 32
        refused(wrap([DER.encode(0x82, Array("2001010000Z".utf8)), key, sig]), .validity)        // 11 bytes
        refused(wrap([key, DER.encode(0x86, [0x00] + [UInt8](repeating: 0x30, count: 80))]), .signature)
        refused(wrap([key, sig]) + [0x00], .format)                                     // trailing byte
    }

    func testNotAPointAndBadDatesAreRefusedAtVerification() throws {
        let ca = P256.Signing.PrivateKey()
        var cert = try ReaderCertificate.issue(subjectPublicKey: Primitives.point(of: P256.Signing.PrivateKey()), issuerKey: ca,
                                               notBefore: now, notAfter: now.addingTimeInterval(60))
        var offCurve = cert
        offCurve.subjectPublicKey[64] ^= 0x01
        XCTAssertThrowsError(try offCurve.verify(issuerPublicKey: Primitives.point(of: ca), at: now)) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .publicKey)
        }
        cert.notAfter = Array("260230000000Z".utf8)   // 30 February
        XCTAssertNil(cert.validity)
    }

    func testX509OutsideTheProfileIsRefused() throws {
        let v = try Self.vectors()
        var der = try XCTUnwrap(Hex.decode(v.certificates[1].x509))
        // The issuer name as PrintableString (13) instead of UTF8String (0C): it would not rebuild.
        let at = try XCTUnwrap(der.firstRange(of: [0x0C, 0x06] + Array("issuer".utf8))).lowerBound
        der[at] = 0x13
        XCTAssertThrowsError(try ReaderCertificate(parsingX509: der)) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .notCompressible)
        }
        XCTAssertThrowsError(try ReaderCertificate(parsingX509: [0x30, 0x03, 0x02, 0x01, 0x01])) {
            XCTAssertEqual(($0 as? ReaderCertificateError)?.code, .format)
        }
    }
}
