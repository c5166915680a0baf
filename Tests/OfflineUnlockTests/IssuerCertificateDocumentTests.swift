import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
@testable import OfflineUnlock
import XCTest

/// Documents that name their issuer by an X.509 certificate (x5chain) an issuer CA signed: each
/// rule of `IssuedDocument.verify` and the engine's validity-now check refuses for its reason,
/// and the kid path keeps working beside it.
final class IssuerCertificateDocumentTests: XCTestCase {
    let f = Fixture()
    let ca = TestFixtures.key(0x55)
    let t0 = Fixture.t0

    func certificate(by signer: P256.Signing.PrivateKey? = nil, from: Date? = nil, until: Date? = nil, key: [UInt8]? = nil) -> [UInt8] {
        try! IssuerCertificate.issue(subjectPublicKey: key ?? f.issuerPoint, caKey: signer ?? ca,
                                     notBefore: from ?? t0.addingTimeInterval(-86_400), notAfter: until ?? t0.addingTimeInterval(86_400))
    }

    func document(certificate: [UInt8]?, kid: Bool = false, signed: Date? = nil, until: Date? = nil) -> [UInt8] {
        let access = try! AccessData(id: [0xC0], readers: [try! ReaderRule(groupID: f.reader.groupID)])
        return try! AccessDocument.issue(access: access, credentialPublicKey: f.credentialKey,
                                         validity: .init(signed: signed ?? t0.addingTimeInterval(-3600), validFrom: t0.addingTimeInterval(-3600),
                                                         validUntil: until ?? t0.addingTimeInterval(8 * 3600)),
                                         issuerKey: f.issuer, issuerCertificate: certificate, includeKeyID: kid).encoded()
    }

    /// Trusts the CA only (not the issuer key): the certificate alone makes the issuer trusted.
    var caTrust: TrustStore { try! TrustStore(issuerCAPublicKeys: [ca.publicBytes]) }

    func verifyError(_ bytes: [UInt8], _ trust: TrustStore) -> DocumentError? {
        do { try IssuedDocument(parsing: bytes).verify(trust: trust); return nil } catch { return error }
    }

    func testACertifiedIssuerIsTrustedThroughItsCAWithOrWithoutKid() throws {
        for kid in [false, true] {
            let bytes = document(certificate: certificate(), kid: kid)
            let doc = try IssuedDocument(parsing: bytes)
            XCTAssertEqual(try doc.verify(trust: caTrust), f.issuerPoint, "kid \(kid)")
            XCTAssertEqual(doc.issuerKeyID, CoseSign1.keyIdentifier(issuerPublicKey: f.issuerPoint), "the revocation list is the issuer key's either way")
            var state = EngineState(clock: TrustedClock(trustedAt: t0))
            let core = DecisionCore(reader: f.reader, policy: f.policy, trust: caTrust)
            XCTAssertTrue(core.decide(f.presentation(access: [bytes]), state: &state, at: t0).isGrant, "kid \(kid)")
        }
        // Keys by kid keep working, without any CA.
        XCTAssertNil(verifyError(document(certificate: nil, kid: true), f.trust()))
    }

    func testEachCertificateRuleRefusesForItsReason() throws {
        let other = TestFixtures.key(0x66)
        let cases: [(String, [UInt8], TrustStore, DocumentError.Code, String)] = [
            ("no CA trusted", document(certificate: certificate()), f.trust(), .untrustedIssuerCertificate, "the lock trusts no issuer CA"),
            ("another signer", document(certificate: certificate(by: other)), caTrust, .untrustedIssuerCertificate, "is not signed by an issuer CA the lock trusts (1 trusted)"),
            ("signed before notBefore", document(certificate: certificate(from: t0), signed: t0.addingTimeInterval(-14 * 86_400)), caTrust,
             .issuerCertificateNotValid, "outside the issuer certificate's validity"),
            ("signed after notAfter", document(certificate: certificate(until: t0.addingTimeInterval(-7200))), caTrust,
             .issuerCertificateNotValid, "the MSO was signed at 2026-03-02T08:00:00Z"),
            ("empty key", document(certificate: Self.emptyKeyCertificate), caTrust, .badIssuerCertificate, "byte 153"),
            ("not DER", document(certificate: [0x30, 0x05, 0x01]), caTrust, .badIssuerCertificate, "issuer certificate (x5chain, COSE header 33)"),
            ("kid of another key", try Self.withKid(document(certificate: certificate()), CoseSign1.keyIdentifier(issuerPublicKey: other.publicBytes)),
             caTrust, .untrustedIssuer, "names another key than its issuer certificate's"),
            ("certificate of another key", document(certificate: certificate(key: other.publicBytes)), caTrust, .badIssuerSignature, "certified by the issuer CA"),
        ]
        for (name, bytes, trust, code, words) in cases {
            let e = verifyError(bytes, trust)
            XCTAssertEqual(e?.code, code, "\(name): \(String(describing: e))")
            XCTAssertTrue(e?.reason.contains(words) == true, "\(name): \(String(describing: e))")
            XCTAssertEqual(e?.denyReason, .untrustedIssuer, name)
            var state = EngineState(clock: TrustedClock(trustedAt: t0))
            let decision = DecisionCore(reader: f.reader, policy: f.policy, trust: trust).decide(f.presentation(access: [bytes]), state: &state, at: t0)
            XCTAssertEqual(decision.denyReason, .untrustedIssuer, "\(name): \(decision)")
        }
    }

    /// A certificate valid when the document was signed but expired since: refused on every
    /// decision, the cached one too (the memo of verified documents holds no time).
    func testTheEngineRefusesACertificateNoLongerValidNow() throws {
        let bytes = document(certificate: certificate(until: t0.addingTimeInterval(3600)), until: t0.addingTimeInterval(8 * 3600))
        let core = DecisionCore(reader: f.reader, policy: f.policy, trust: caTrust)
        var state = EngineState(clock: TrustedClock(trustedAt: t0))
        XCTAssertTrue(core.decide(f.presentation(access: [bytes]), state: &state, at: t0).isGrant)
        let later = t0.addingTimeInterval(3600 + f.policy.clockLeeway + 1)
        let cached = core.decide(f.presentation(), state: &state, at: later)
        XCTAssertEqual(cached.denyReason, .untrustedIssuer, "\(cached)")
        if case .deny(_, let detail) = cached { XCTAssertTrue(detail.contains("its issuer certificate (LockBench Issuer) is valid"), detail) }
        XCTAssertEqual(core.decide(f.presentation(access: [bytes]), state: &state, at: later).denyReason, .untrustedIssuer)
    }

    /// The fault knob takes the certificate's key unchecked: another CA's certificate verifies,
    /// an unparsable one still cannot.
    func testTheSkipFaultTakesTheKeyUnchecked() throws {
        var faulty = caTrust
        faulty.skipsIssuerCertificateChecks = true
        XCTAssertNil(verifyError(document(certificate: certificate(by: TestFixtures.key(0x66))), faulty))
        XCTAssertNil(verifyError(document(certificate: certificate(from: t0), signed: t0.addingTimeInterval(-86_400)), faulty))
        XCTAssertEqual(verifyError(document(certificate: Self.emptyKeyCertificate), faulty)?.code, .badIssuerCertificate)
    }

    static let emptyKeyCertificate = Hex.decode(
        "3081e53081cba00302010202012a300a06082a8648ce3d04030230233121301f060355040313184356452d323032362d353035383320497373756572204341"
        + "301e170d3236303130313030303030305a170d3336303130313030303030305a3021311f301d060355040313164356452d323032362d3530353833205375626a656374"
        + "3018301306072a8648ce3d020106082a8648ce3d030107030100a3333031301f0603551d230418301680149a8b7c6d5e4f0102030405060708090a0b0c0d0e"
        + "300e0603551d0f0101ff040403020284300a06082a8648ce3d0403020309003006020100020100")!

    /// The document with `kid` put in its issuerAuth header (the signature does not cover it).
    static func withKid(_ bytes: [UInt8], _ kid: [UInt8]) throws -> [UInt8] {
        var doc = try IssuedDocument(parsing: bytes)
        doc.issuerAuth.unprotected[CoseSign1.Header.kid] = .bytes(kid)
        return doc.encoded()
    }
}
