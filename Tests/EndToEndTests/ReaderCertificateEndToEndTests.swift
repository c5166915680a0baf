import LockBenchTestSupport
import Foundation
import XCTest

/// Reader certificates as processes: `key reader-cert` issues one, a lock configuration presents it
/// (AUTH1 90 or LOAD CERT), `credential serve --reader-issuer-ca` trusts its CA; `conformance`
/// runs the official certificate cases both ways over the socket transport and the virtual PN532,
/// and each fault knob fails exactly its cases.
final class ReaderCertificateEndToEndTests: XCTestCase {
    var dir: URL!

    /// `th_reader_issuer_public_key` of the official tool (the CA the certificate cases' phone trusts).
    static let officialIssuerPEM = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOSjzIgGdR1eJO95qD+XhPj5Te5yg\n9UnAvS9A95BgJSoKTykRkhV6lctusgJ1lCjADNg0mYxdDqsZLuiHPF007g==\n-----END PUBLIC KEY-----\n"
    static let officialGroup = "00113344667799AA00113344667799AA"
    var doorGroup = ""

    override func setUpWithError() throws {
        dir = try LockBenchProcess.temporaryDirectory(self)
        try lb(["key", "issuer", "issuer"])
        try lb(["key", "issuer", "reader-ca"])
        try lb(["key", "credential", "alice"])
        try lb(["key", "reader", "door"])
        try lb(["doc", "issue", "--issuer-key", "issuer.key.pem", "--credential", "alice.pub.pem", "--reader-identity", "door.reader.json",
                "--valid-from", "2026-03-02T08:00:00Z", "--valid-until", "2026-03-02T18:00:00Z", "--id", "alice-1",
                "--now", "2026-03-02T07:00:00Z", "--out", "alice.cbor"])
        try lb(["config", "create", "--reader-identity", "door.reader.json", "--issuer", "issuer.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--no-fast", "--max-lifetime", "14d", "--out", "door.lock.json"])
        try Self.officialIssuerPEM.write(to: dir.appendingPathComponent("official-ca.pub.pem"), atomically: true, encoding: .utf8)
        let identity = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("door.reader.json"))) as! [String: Any]
        doorGroup = identity["groupID"] as! String
    }

    @discardableResult
    private func lb(_ args: [String], expect status: Int32? = 0, file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        if let status {
            XCTAssertEqual(r.status, status, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        }
        return r
    }

    /// door.lock.json with the certificate added: `mode`, `chaining`, its own state directory.
    private func certificateLock(_ name: String, mode: String, chaining: String = "auto") throws {
        let url = dir.appendingPathComponent("door.lock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var reader = config["reader"] as! [String: Any]
        reader["certificate"] = ["file": "door.cert.der", "issuerPublicKey": "reader-ca.pub.pem", "mode": mode, "chaining": chaining]
        config["reader"] = reader
        config["stateDirectory"] = name + ".state"
        try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted]).write(to: dir.appendingPathComponent(name + ".lock.json"))
    }

    private func statuses(_ json: String) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(json[json.firstIndex(of: "{")!...].utf8)) as! [String: Any]
        return Dictionary(uniqueKeysWithValues: (object["results"] as! [[String: Any]]).map { ($0["id"] as! String, $0["status"] as! String) })
    }

    private func statuses(lines: [String]) -> [String: String] {
        var out: [String: String] = [:]
        for l in lines {
            let words = l.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count >= 2, ["pass", "FAIL", "warn", "n/a"].contains(String(words[0])) else { continue }
            out[String(words[1])] = ["pass": "pass", "FAIL": "fail", "warn": "advisory_failed"][String(words[0])] ?? "not_applicable"
        }
        return out
    }

    private var phone: [String] {
        ["--key", "alice.key.pem", "--document", "alice.cbor", "--trust-reader", "door.reader.json",
         "--reader-issuer-ca", "\(Self.officialGroup)=official-ca.pub.pem", "--reader-issuer-ca", "\(doorGroup)=reader-ca.pub.pem"]
    }

    private func servePhone(_ extra: [String] = []) throws -> UInt16 {
        let p = try InteractiveProcess(["credential", "serve", "--port", "0"] + phone + extra, currentDirectory: dir)
        addTeardownBlock { p.terminate() }
        let line = try p.waitForLine(containing: "listening on")
        return UInt16(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))!
    }

    /// `conformance reader --listen 0 --only …` with `lock transact` connecting until it is done.
    private func readerOverSocket(config: String, only: [String], lockFaults: [String] = []) throws -> (statuses: [String: String], lines: String) {
        let conf = try InteractiveProcess(["conformance", "reader", "--listen", "0", "--timeout", "20", "--only"] + only + phone, currentDirectory: dir)
        addTeardownBlock { conf.terminate() }
        let port = try conf.waitForLine(containing: "listening on").split(separator: ":")[1].split(separator: ";")[0]
        for _ in 0..<10 where conf.process.isRunning {
            _ = try LockBenchProcess.run(["lock", "transact", "--config", config, "--connect", "127.0.0.1:\(port)"] + lockFaults.flatMap { ["--fault", $0] },
                                         currentDirectory: dir)
        }
        conf.process.waitUntilExit()
        var lines: [String] = []
        while let line = try? conf.waitForLine(containing: " ", timeout: 0.5) { lines.append(line) }
        return (statuses(lines: lines), lines.joined(separator: "\n"))
    }

    static let credentialCases = ["cert.auth1", "cert.auth1-chained", "cert.load-cert", "cert.load-cert-chained",
                                  "cert.neg.load-cert-signature", "cert.neg.load-cert-format"]

    func testKeyReaderCertAndTheCertificateCasesOverSocket() throws {
        let issued = try lb(["key", "reader-cert", "door", "--issuer-ca", "reader-ca.key.pem", "--reader", "door.reader.json"])
        XCTAssertTrue(issued.stdout.contains("reader certificate: door.cert.der"), issued.stdout)
        XCTAssertNotEqual(try lb(["key", "reader-cert", "door", "--issuer-ca", "reader-ca.key.pem", "--reader", "door.reader.json"], expect: nil).status, 0,
                          "an existing certificate is not overwritten without --force")
        try certificateLock("auth1", mode: "auth1")
        try lb(["config", "create", "--reader-identity", "door.reader.json", "--issuer", "issuer.pub.pem", "--clock", "2026-03-02T09:00:00Z",
                "--no-fast", "--max-lifetime", "14d", "--reader-certificate", "door.cert.der", "--reader-issuer-ca", "reader-ca.pub.pem",
                "--certificate-mode", "load-cert", "--chain-certificate", "--out", "load.lock.json"])
        // A certificate the named CA did not sign is refused when the configuration is written.
        let refused = try lb(["config", "create", "--reader-identity", "door.reader.json", "--reader-certificate", "door.cert.der",
                              "--reader-issuer-ca", "issuer.pub.pem", "--out", "bad.lock.json"], expect: nil)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("not signed by the CA"), refused.stderr)

        // The phone direction: LockBench's phone provisioned as the prompt says passes all six;
        // without --reader-certificates they are not applicable; skip-certificate-check fails the two negative ones.
        let port = try servePhone()
        let all = try statuses(try lb(["conformance", "credential", "--reader-identity", "door.reader.json", "--connect", "127.0.0.1:\(port)",
                                       "--json", "--reader-certificates"]).stdout)
        XCTAssertEqual(Set(all.filter { $0.value == "fail" }.keys), [], "\(all)")
        for id in Self.credentialCases { XCTAssertEqual(all[id], "pass", id) }
        let unprovisioned = try statuses(try lb(["conformance", "credential", "--reader-identity", "door.reader.json",
                                                 "--connect", "127.0.0.1:\(port)", "--json", "--only"] + Self.credentialCases).stdout)
        XCTAssertEqual(Set(unprovisioned.values), ["not_applicable"])
        let faulty = try servePhone(["--fault", "skip-certificate-check"])
        let f = try statuses(try lb(["conformance", "credential", "--reader-identity", "door.reader.json", "--connect", "127.0.0.1:\(faulty)",
                                     "--json", "--reader-certificates"], expect: 1).stdout)
        XCTAssertEqual(Set(f.filter { $0.value == "fail" }.keys), ["cert.neg.load-cert-signature", "cert.neg.load-cert-format"], "\(f)")

        // The lock direction: the lock presenting its certificate in AUTH1 passes that case (and a
        // plain standard transaction with it); with omit-certificate only the certificate case fails.
        let auth1 = try readerOverSocket(config: "auth1.lock.json", only: ["rdr.cert.auth1", "rdr.cert.load-cert", "rdr.standard"])
        XCTAssertEqual(auth1.statuses, ["rdr.cert.auth1": "pass", "rdr.cert.load-cert": "fail", "rdr.standard": "pass"], auth1.lines)
        let omitted = try readerOverSocket(config: "auth1.lock.json", only: ["rdr.cert.auth1", "rdr.standard"], lockFaults: ["omit-certificate"])
        XCTAssertEqual(omitted.statuses, ["rdr.cert.auth1": "fail", "rdr.standard": "pass"], omitted.lines)
        let load = try readerOverSocket(config: "load.lock.json", only: ["rdr.cert.load-cert-chained", "rdr.cert.load-cert"])
        XCTAssertEqual(load.statuses, ["rdr.cert.load-cert-chained": "pass", "rdr.cert.load-cert": "fail"], load.lines)
    }

    func testTheCertificateCasesOverTheVirtualPN532() throws {
        try lb(["key", "reader-cert", "door", "--issuer-ca", "reader-ca.key.pem", "--reader", "door.reader.json"])
        try certificateLock("auth1", mode: "auth1", chaining: "always")
        // LockBench the reader through libnfc, its phone in a virtual PN532's field.
        let link = dir.appendingPathComponent("phone-reader").path
        let card = try InteractiveProcess(["nfc", "virtual-reader", "--link", link] + phone, currentDirectory: dir)
        addTeardownBlock { card.terminate() }
        _ = try card.waitForLine(containing: "card: inserted")
        let r = try statuses(try lb(["conformance", "credential", "--reader-identity", "door.reader.json", "--nfc", "pn532_uart:\(link)",
                                     "--json", "--reader-certificates", "--only"] + Self.credentialCases).stdout)
        XCTAssertEqual(r, Dictionary(uniqueKeysWithValues: Self.credentialCases.map { ($0, "pass") }))
        card.terminate()

        // LockBench the phone in a virtual PN532 that the lock (`lock run`) polls: AUTH1 with its certificate, chained.
        let lockLink = dir.appendingPathComponent("lock-reader").path
        let conf = try InteractiveProcess(["conformance", "reader", "--nfc", "virtual:\(lockLink)", "--timeout", "20",
                                           "--only", "rdr.cert.auth1-chained", "rdr.cert.auth1"] + phone, currentDirectory: dir)
        addTeardownBlock { conf.terminate() }
        _ = try conf.waitForLine(containing: "connstring: pn532_uart:\(lockLink)")
        let lock = try InteractiveProcess(["lock", "run", "--config", "auth1.lock.json", "--nfc", "pn532_uart:\(lockLink)"], currentDirectory: dir)
        addTeardownBlock { lock.terminate() }
        let deadline = Date(timeIntervalSinceNow: 120)
        while conf.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        lock.terminate()
        var lines: [String] = []
        while let line = try? conf.waitForLine(containing: " ", timeout: 0.5) { lines.append(line) }
        // Chained on request: the chained case passes, the one-APDU case fails ("sent with chaining").
        XCTAssertEqual(statuses(lines: lines), ["rdr.cert.auth1-chained": "pass", "rdr.cert.auth1": "fail"], lines.joined(separator: "\n"))
    }
}
