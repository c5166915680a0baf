import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
@testable import Lock
import XCTest

/// `reader.certificate` in the lock configuration: what loads, and each refusal naming the field.
final class ReaderCertificateConfigTests: XCTestCase {
    let ca = P256.Signing.PrivateKey()

    /// A configuration whose reader holds a certificate over `over` (default: its own key) by `by`.
    func config(_ dir: String, over: P256.Signing.PrivateKey? = nil, by: P256.Signing.PrivateKey? = nil,
                certificateBytes: [UInt8]? = nil, caFile: String = "ca.pub.pem", mode: String = "load-cert") throws -> String {
        let path = try LockFixture().makeConfig(dir)
        let reader = try PrivateKeyFile.load(dir + "/reader.key.pem")
        try ca.publicKey.pemRepresentation.write(toFile: dir + "/ca.pub.pem", atomically: true, encoding: .utf8)
        let cert = try ReaderCertificate.issue(subjectPublicKey: Primitives.point(of: over ?? reader), issuerKey: by ?? ca,
                                               notBefore: TestFixtures.monday, notAfter: TestFixtures.monday.addingTimeInterval(86_400))
        let der = certificateBytes ?? cert.x509(issuerPublicKey: Primitives.point(of: by ?? ca))
        try Data(der).write(to: URL(fileURLWithPath: dir + "/reader.cert.der"))
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
        var r = json["reader"] as! [String: Any]
        r["certificate"] = ["file": "reader.cert.der", "issuerPublicKey": caFile, "mode": mode]
        json["reader"] = r
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
        return path
    }

    func refused(_ path: String, _ words: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try LockConfiguration.load(path: path), file: file, line: line) {
            XCTAssertTrue("\($0)".contains(words), "\($0)", file: file, line: line)
        }
    }

    func testACertificateOverTheReaderKeyByTheNamedCALoads() throws {
        let dir = try temporaryDirectory("lockbench-cert").path
        let c = try LockConfiguration.load(path: try config(dir))
        let presentation = try XCTUnwrap(try c.readerCertificate())
        XCTAssertEqual(presentation.mode, .loadCert)
        XCTAssertFalse(presentation.alwaysChain)
        XCTAssertEqual(presentation.issuerPublicKey, Primitives.point(of: ca))
        XCTAssertEqual(presentation.certificate.subjectPublicKey, Primitives.point(of: try c.readerSigningKey()))
        // Re-encoded, the configuration keeps the block.
        XCTAssertEqual(try LockConfiguration.load(c.encoded(), path: dir + "/lock.json").reader.certificate, c.reader.certificate)
        // PEM is read too.
        let der = try Data(contentsOf: URL(fileURLWithPath: dir + "/reader.cert.der"))
        try "-----BEGIN CERTIFICATE-----\n\(der.base64EncodedString(options: .lineLength64Characters))\n-----END CERTIFICATE-----\n"
            .write(toFile: dir + "/reader.cert.der", atomically: true, encoding: .utf8)
        XCTAssertEqual(try LockConfiguration.load(path: dir + "/lock.json").readerCertificate()?.certificate, presentation.certificate)
    }

    func testEachRefusal() throws {
        refused(try config(try temporaryDirectory("lockbench-cert").path, over: P256.Signing.PrivateKey()), "names another key than reader.signingKey")
        refused(try config(try temporaryDirectory("lockbench-cert").path, by: P256.Signing.PrivateKey()), "not signed by the CA")
        refused(try config(try temporaryDirectory("lockbench-cert").path, certificateBytes: [0x30, 0x03, 0x02, 0x01, 0x01]), "reader.certificate.file")
        refused(try config(try temporaryDirectory("lockbench-cert").path, caFile: "missing.pem"), "reader.certificate.issuerPublicKey: cannot read")
        refused(try config(try temporaryDirectory("lockbench-cert").path, mode: "in-exchange"), "mode")
        refused(try config(try temporaryDirectory("lockbench-cert").path, certificateBytes: [UInt8](repeating: 0x30, count: 20_000)), "holds 20000 bytes")
        let dir = try temporaryDirectory("lockbench-cert").path
        let path = try config(dir)
        try FileManager.default.removeItem(atPath: dir + "/reader.cert.der")
        refused(path, "reader.certificate.file: cannot read")
    }
}
