import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// The lock's part of the lock configuration file (JSON; docs/lock-config.md): what the lock
/// decides, acts and records with. The radios' part (`nfc`, `ble`) in the same object belongs to
/// the runtime (`RadioSettings`, LockRuntime), and this type skips it. Relative paths are relative
/// to the file's own directory.
///
/// ```json
/// {
///   "model": "NDE", "firmware": "03.20.00",
///   "reader": { "signingKey": "reader.key.pem",
///               "groupID": "a1a1…(32 hex)", "subID": "b1b1…(32 hex)" },
///   "trustedIssuers": ["issuer.pub.pem"],
///   "trustedIssuerCAs": ["issuer-ca.pub.pem"],
///   "trustedCredentialKeys": "credential-keys.txt",
///   "policy": { "maxDocumentLifetime": "7d", "clockLeeway": "5m", "relockTime": "5s" },
///   "stateDirectory": "state",
///   "clock": "2026-03-02T09:00:00Z",
///   "protocol": { "stepUpSelect": "when-asked", "stepUpExchange": "step-up",
///                 "mailbox": [{ "op": "read", "offset": 0, "length": 8 }] }
/// }
/// ```
public struct LockConfiguration: Codable, Equatable, Sendable {
    public struct Reader: Codable, Equatable, Sendable {
        /// PEM PKCS#8 private key of the reader (signs AUTH1).
        public var signingKey: String
        /// 16-byte reader group id, 32 hex digits.
        public var groupID: String
        /// 16-byte reader sub id, 32 hex digits.
        public var subID: String
        /// The reader certificate shown to phones (`lockbench key reader-cert`); absent: none.
        public var certificate: Certificate?
        public init(signingKey: String, groupID: String, subID: String, certificate: Certificate? = nil) {
            self.signingKey = signingKey; self.groupID = groupID; self.subID = subID; self.certificate = certificate
        }
    }

    /// `"certificate": {"file": "reader.cert.der", "issuerPublicKey": "ca.pub.pem", "mode": "auth1",
    /// "chaining": "auto"}`: an X.509 reader certificate (DER or PEM) a reader issuer CA signed over
    /// the reader key, the CA's public key (phones trust it as the group key), whether it goes in
    /// AUTH1 `90` or by LOAD CERT, and whether the command is always chained or only when long.
    public struct Certificate: Codable, Equatable, Sendable {
        public enum Chaining: String, Codable, Sendable, CaseIterable {
            /// Only when the command is longer than one APDU.
            case auto
            /// Always (split in two when it would fit one).
            case always
        }
        public var file: String
        public var issuerPublicKey: String
        public var mode: ReaderCertificatePresentation.Mode
        public var chaining: Chaining?

        public init(file: String, issuerPublicKey: String, mode: ReaderCertificatePresentation.Mode, chaining: Chaining? = nil) {
            self.file = file; self.issuerPublicKey = issuerPublicKey; self.mode = mode; self.chaining = chaining
        }
    }
    /// How the reader meets credentials built differently (docs/protocol.md "Optional elements").
    public struct ProtocolOptions: Codable, Equatable, Sendable {
        /// `when-asked` (default): the step-up SELECT only when the AUTH1 bitmap sets bit 2; `always`.
        public var stepUpSelect: StepUpSelectMode
        /// `step-up` (default): the closing EXCHANGE after a step-up on the step-up channel; `expedited`.
        public var stepUpExchange: StepUpExchangeChannel
        /// Mailbox operations sent in every closing EXCHANGE that reports a decision.
        public var mailbox: [MailboxStep]
        /// `true` (default): AUTH0 asks for FAST once the reader holds a Kpersistent; `false`:
        /// standard transactions only (the official cases' "polling mode for standard transactions").
        public var fast: Bool
        /// AUTH0's authentication policy (`42`): 1 / `user-device` (default), 2 / `secure-action`,
        /// 3 / `force-user-authentication` (RD-BLE-AUTH0-2.0 expects 3).
        public var policy: AuthenticationPolicy = .userDevice
        /// `false` (default): step up only when the lock holds no usable document for the key or
        /// the phone announces a newer one; `true`: at every tap whose phone announces a document
        /// (the official NFC_RDR_STEPUP_AD_SAME_DOC_TWICE expects a reader set this way).
        public var stepUpEveryTap: Bool = false

        public init(stepUpSelect: StepUpSelectMode = .whenAsked, stepUpExchange: StepUpExchangeChannel = .stepUp,
                    mailbox: [MailboxStep] = [], fast: Bool = true, policy: AuthenticationPolicy = .userDevice,
                    stepUpEveryTap: Bool = false) {
            self.stepUpSelect = stepUpSelect; self.stepUpExchange = stepUpExchange; self.mailbox = mailbox
            self.fast = fast; self.policy = policy; self.stepUpEveryTap = stepUpEveryTap
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            stepUpSelect = try c.decodeIfPresent(StepUpSelectMode.self, forKey: .stepUpSelect) ?? .whenAsked
            stepUpExchange = try c.decodeIfPresent(StepUpExchangeChannel.self, forKey: .stepUpExchange) ?? .stepUp
            mailbox = try c.decodeIfPresent([MailboxStep].self, forKey: .mailbox) ?? []
            fast = try c.decodeIfPresent(Bool.self, forKey: .fast) ?? true
            policy = try c.decodeIfPresent(AuthenticationPolicy.self, forKey: .policy) ?? .userDevice
            stepUpEveryTap = try c.decodeIfPresent(Bool.self, forKey: .stepUpEveryTap) ?? false
            guard mailbox.count <= Self.maxMailboxSteps else {
                throw DecodingError.dataCorruptedError(forKey: .mailbox, in: c,
                    debugDescription: "at most \(Self.maxMailboxSteps) mailbox operations, got \(mailbox.count)")
            }
            let size = ExchangeCommandPlaintext(readerStatus: 0, mailbox: mailbox.map(\.operation)).encoded().count
            guard size <= Self.maxExchangePlaintext else {
                throw DecodingError.dataCorruptedError(forKey: .mailbox, in: c,
                    debugDescription: "the mailbox operations make a \(size)-byte EXCHANGE; at most \(Self.maxExchangePlaintext)")
            }
        }

        public static let maxMailboxSteps = 32
        public static let maxExchangePlaintext = 1024
    }

    /// One mailbox operation as the configuration writes it:
    /// `{"op": "read", "offset": 0, "length": 8}`, `{"op": "write", "offset": 0, "data": "HEX"}`,
    /// `{"op": "set", "offset": 0, "length": 4, "value": 255}`.
    public struct MailboxStep: Codable, Equatable, Sendable {
        public var operation: MailboxOperation

        public init(_ operation: MailboxOperation) { self.operation = operation }

        enum CodingKeys: String, CodingKey { case op, offset, length, data, value }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let op = try c.decode(String.self, forKey: .op)
            let offset = try c.decode(UInt16.self, forKey: .offset)
            switch op {
            case "read": operation = .read(offset: offset, length: try c.decode(UInt16.self, forKey: .length))
            case "write":
                let text = try c.decode(String.self, forKey: .data)
                guard let data = Hex.decode(text), data.count <= 0xFFFF - 2 else {
                    throw DecodingError.dataCorruptedError(forKey: .data, in: c, debugDescription: "data must be hex digits, got \"\(text)\"")
                }
                operation = .write(offset: offset, data: data)
            case "set":
                operation = .set(offset: offset, length: try c.decode(UInt16.self, forKey: .length),
                                 value: try c.decode(UInt8.self, forKey: .value))
            default:
                throw DecodingError.dataCorruptedError(forKey: .op, in: c, debugDescription: "op must be read, write or set, got \"\(op)\"")
            }
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch operation {
            case .read(let o, let l):
                try c.encode("read", forKey: .op); try c.encode(o, forKey: .offset); try c.encode(l, forKey: .length)
            case .write(let o, let d):
                try c.encode("write", forKey: .op); try c.encode(o, forKey: .offset); try c.encode(Hex.encode(d), forKey: .data)
            case .set(let o, let l, let v):
                try c.encode("set", forKey: .op); try c.encode(o, forKey: .offset); try c.encode(l, forKey: .length)
                try c.encode(v, forKey: .value)
            }
        }
    }

    public var model: String
    public var firmware: String
    public var reader: Reader
    /// PEM SPKI public key files of the issuers whose documents this lock accepts.
    public var trustedIssuers: [String]
    /// PEM SPKI public key files of the issuer CAs: a document whose issuerAuth carries an issuer
    /// certificate (x5chain) one of them signed is from a trusted issuer (absent: none).
    public var trustedIssuerCAs: [String] = []
    /// A file of credential public keys the lock trusts without a document, one hex key a line
    /// (`CredentialKeyList`; absent: none): each is granted on AUTH1 alone unless revoked.
    public var trustedCredentialKeys: String?
    public var policy: LockPolicy
    /// Where state, the audit log and its key live.
    public var stateDirectory: String
    /// The virtual clock at first start: an RFC 3339 time (frozen there, CI) or "system" (running).
    public var clock: String?
    /// Optional-element behaviour; absent = the defaults.
    public var `protocol`: ProtocolOptions
    /// Bounds on each transaction (absent: `TransactionLimits()` defaults).
    public var transaction: TransactionLimits?
    /// The audit (and state) HMAC key file; absent = `STATE/audit.key`. Keep it off the state
    /// directory's disk so that whoever can rewrite the state cannot also re-sign it.
    public var auditKeyFile: String?
    /// The rollback anchor (`JournalAnchor`): a file on other media than the state directory —
    /// the part of the lock an attacker who can restore the state directory cannot rewind, as a
    /// secure element's monotonic counter — holding the journal head of the last snapshot.
    /// Absent: no anchor (a restored older state directory is not detected; docs/security.md).
    public var anchorFile: String?
    /// The directory relative paths are resolved against (not stored in the file).
    public var baseDirectory: String = "."
    /// Deliberate misbehaviour (`lock run|transact --fault`; never stored in the file): of these
    /// only the engine's (`skipIssuerCertificateChecks`, `ignoreValidityIteration`, `revocationAppendAsOverwrite`) are read here, the reader session's are its own.
    public var faults: ReaderFaults = []

    enum CodingKeys: String, CodingKey {
        case model, firmware, reader, trustedIssuers, trustedIssuerCAs, trustedCredentialKeys, policy, stateDirectory, clock, `protocol`, transaction, auditKeyFile, anchorFile
    }

    public init(model: String, firmware: String, reader: Reader, trustedIssuers: [String], policy: LockPolicy = LockPolicy(),
                stateDirectory: String, clock: String? = nil,
                protocol options: ProtocolOptions = ProtocolOptions(), baseDirectory: String = ".") {
        self.model = model; self.firmware = firmware; self.reader = reader; self.trustedIssuers = trustedIssuers
        self.policy = policy; self.stateDirectory = stateDirectory; self.clock = clock
        self.protocol = options
        self.baseDirectory = baseDirectory
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        model = try c.decode(String.self, forKey: .model)
        firmware = try c.decode(String.self, forKey: .firmware)
        reader = try c.decode(Reader.self, forKey: .reader)
        trustedIssuers = try c.decodeIfPresent([String].self, forKey: .trustedIssuers) ?? []
        trustedIssuerCAs = try c.decodeIfPresent([String].self, forKey: .trustedIssuerCAs) ?? []
        trustedCredentialKeys = try c.decodeIfPresent(String.self, forKey: .trustedCredentialKeys)
        policy = try c.decodeIfPresent(LockPolicy.self, forKey: .policy) ?? LockPolicy()
        stateDirectory = try c.decodeIfPresent(String.self, forKey: .stateDirectory) ?? "state"
        clock = try c.decodeIfPresent(String.self, forKey: .clock)
        `protocol` = try c.decodeIfPresent(ProtocolOptions.self, forKey: .protocol) ?? ProtocolOptions()
        transaction = try c.decodeIfPresent(TransactionLimits.self, forKey: .transaction)
        auditKeyFile = try c.decodeIfPresent(String.self, forKey: .auditKeyFile)
        anchorFile = try c.decodeIfPresent(String.self, forKey: .anchorFile)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(model, forKey: .model)
        try c.encode(firmware, forKey: .firmware)
        try c.encode(reader, forKey: .reader)
        try c.encode(trustedIssuers, forKey: .trustedIssuers)
        if !trustedIssuerCAs.isEmpty { try c.encode(trustedIssuerCAs, forKey: .trustedIssuerCAs) }
        try c.encodeIfPresent(trustedCredentialKeys, forKey: .trustedCredentialKeys)
        try c.encode(policy, forKey: .policy)
        try c.encode(stateDirectory, forKey: .stateDirectory)
        try c.encodeIfPresent(clock, forKey: .clock)
        if self.protocol != ProtocolOptions() { try c.encode(self.protocol, forKey: .protocol) }
        try c.encodeIfPresent(transaction, forKey: .transaction)
        try c.encodeIfPresent(auditKeyFile, forKey: .auditKeyFile)
        try c.encodeIfPresent(anchorFile, forKey: .anchorFile)
    }

    /// Reads and checks a configuration file; every problem names the file and the field.
    public static func load(path: String) throws(LockError) -> LockConfiguration {
        // A path that names no file is bad input (exit 2, as a missing key file is); a file that is
        // there but cannot be read is the machine's failure (exit 3).
        guard FileManager.default.fileExists(atPath: path) else {
            throw LockError(.invalidConfiguration, "lock configuration \(path): no such file (check the --config path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw LockError(.io, "cannot read lock configuration \(path)") }
        return try load(data, path: path)
    }

    /// `load(path:)` on bytes already read from `path` (the fuzz target `config` enters here); the
    /// key and issuer files it names are still read relative to `path`'s directory.
    public static func load(_ data: Data, path: String) throws(LockError) -> LockConfiguration {
        var config: LockConfiguration
        // A repeated key is refused, not half-read: the decoder would keep one of them silently.
        if let d = JSONInspection(data).duplicateKey {
            throw LockError(.invalidConfiguration, "\(path): key \"\(d.key)\" appears twice in \(d.path.isEmpty ? "the top-level object" : d.path); keep one")
        }
        do { config = try JSONDecoder().decode(LockConfiguration.self, from: data) } catch {
            throw LockError(.invalidConfiguration, "\(path): \(describe(error, decoding: LockConfiguration.self, in: data))")
        }
        config.baseDirectory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        do throws(DurationText.Refusal) { try config.policy.validate() } catch { throw LockError(.invalidConfiguration, "\(path): \(error.message)") }
        _ = try config.readerIdentity()
        _ = try config.readerSigningKey()
        _ = try config.readerCertificate()
        _ = try config.trustStore()
        _ = try config.initialClock()
        try config.checkFiles(path: path)
        return config
    }

    /// The lock's own files as far as they exist already: the state directory a directory, the
    /// audit key 32 bytes, the anchor a file — refused here, naming the field, rather than at the
    /// lock's first write (or, for a short key, never).
    func checkFiles(path: String) throws(LockError) {
        for (field, value) in [("model", model), ("firmware", firmware)] where value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw LockError(.invalidConfiguration, "\(path): \(field) is empty; name the lock's \(field) as the certification tables do (`lockbench firmware list`), e.g. \(field == "model" ? "\"NDE\"" : "\"03.20.00\"")")
        }
        guard !stateDirectory.isEmpty else {
            throw LockError(.invalidConfiguration, "\(path): stateDirectory is empty; name the directory for the lock's state and audit log (relative to this file), e.g. \"door.state\"")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: stateDirectoryPath, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw LockError(.invalidConfiguration, "\(path): stateDirectory \(stateDirectoryPath) is a file, not a directory; name a directory (it is created if missing)")
        }
        for (field, file, size) in [("auditKeyFile", auditKeyPath, 32), ("anchorFile", anchorPath, nil)] {
            guard let file, FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                throw LockError(.invalidConfiguration, "\(path): \(field) \(file) is a directory; name a file (it is created at the first start)")
            }
            if let size, let n = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue, n != size {
                throw LockError(.invalidConfiguration, "\(path): \(field) \(file) holds \(n) bytes; an audit key is exactly \(size) random bytes. Restore the lock's own key, or remove the file and start afresh with `lockbench lock reset`")
            }
        }
    }

    public func encoded() -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try! e.encode(self)
    }

    public func resolve(_ p: String) -> String { p.hasPrefix("/") ? p : baseDirectory + "/" + p }

    public var stateDirectoryPath: String { resolve(stateDirectory) }

    /// The audit key file: `auditKeyFile`, or `audit.key` in the state directory.
    public var auditKeyPath: String { auditKeyFile.map(resolve) ?? stateDirectoryPath + "/" + AuditLog.keyFileName }

    /// The rollback anchor file, when configured.
    public var anchorPath: String? { anchorFile.map(resolve) }

    public func readerIdentity() throws(LockError) -> OfflineUnlock.ReaderIdentity {
        guard let g = Hex.decode(reader.groupID), g.count == 16 else {
            throw LockError(.invalidIdentity, "reader.groupID must be 32 hex digits (16 bytes), got \"\(reader.groupID)\"")
        }
        guard let s = Hex.decode(reader.subID), s.count == 16 else {
            throw LockError(.invalidIdentity, "reader.subID must be 32 hex digits (16 bytes), got \"\(reader.subID)\"")
        }
        return ReaderIdentity(groupID: g, subID: s)
    }

    public func readerSigningKey() throws(LockError) -> P256.Signing.PrivateKey {
        do throws(LockError) { return try PrivateKeyFile.load(resolve(reader.signingKey)) } catch {
            throw LockError(error.code, "reader.signingKey: \(error.reason)")
        }
    }

    /// The reader certificate as the reader presents it; nil when none is configured. Refused
    /// unless it is a certificate over this reader's key that verifies under the named CA.
    public func readerCertificate() throws(LockError) -> ReaderCertificatePresentation? {
        guard let c = reader.certificate else { return nil }
        let path = resolve(c.file), keyPath = resolve(c.issuerPublicKey)
        // A certificate is at most `maxX509` bytes, as PEM about a third more: nothing larger is read.
        if let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue, size > 16 * ReaderCertificate.maxX509 {
            throw LockError(.invalidIdentity, "reader.certificate.file \(path) holds \(size) bytes; a reader certificate is at most \(ReaderCertificate.maxX509) (DER)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LockError(.invalidIdentity, "reader.certificate.file: cannot read \(path)")
        }
        guard let caData = FileManager.default.contents(atPath: keyPath), let caPEM = String(data: caData, encoding: .utf8) else {
            throw LockError(.invalidIdentity, "reader.certificate.issuerPublicKey: cannot read \(keyPath)")
        }
        let issuer: [UInt8]
        do { issuer = try Primitives.publicKey(spkiPEM: caPEM) } catch {
            throw LockError(.invalidIdentity, "reader.certificate.issuerPublicKey \(keyPath): \(error.reason)")
        }
        let certificate: ReaderCertificate
        do { certificate = try ReaderCertificate(parsingX509: Self.certificateDER(Array(data))) } catch {
            throw LockError(.invalidIdentity, "reader.certificate.file \(path): \(error.reason)")
        }
        guard certificate.subjectPublicKey == Primitives.point(of: try readerSigningKey()) else {
            throw LockError(.invalidIdentity, "reader.certificate.file \(path): the certificate names another key than reader.signingKey")
        }
        guard certificate.isSigned(by: issuer) else {
            throw LockError(.invalidIdentity, "reader.certificate.file \(path): not signed by the CA in \(keyPath)")
        }
        return ReaderCertificatePresentation(certificate: certificate, issuerPublicKey: issuer, mode: c.mode,
                                             alwaysChain: c.chaining == .always)
    }

    /// DER as found, or the first `CERTIFICATE` block of a PEM file.
    static func certificateDER(_ bytes: [UInt8]) -> [UInt8] {
        guard let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else { return bytes }
        let body = text.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1].components(separatedBy: "-----END CERTIFICATE-----")[0]
        return Data(base64Encoded: body.filter { !$0.isWhitespace }).map { Array($0) } ?? bytes
    }

    public func trustStore() throws(LockError) -> TrustStore {
        var store = try! TrustStore()
        store.skipsIssuerCertificateChecks = faults.contains(.skipIssuerCertificateChecks)
        for (i, point) in try publicKeys(trustedIssuers, field: "trustedIssuers").enumerated() {
            do { try store.add(point) } catch { throw LockError(.invalidIdentity, "trustedIssuers[\(i)]: \(error.reason)") }
        }
        for (i, point) in try publicKeys(trustedIssuerCAs, field: "trustedIssuerCAs").enumerated() {
            do { try store.addIssuerCA(point) } catch { throw LockError(.invalidIdentity, "trustedIssuerCAs[\(i)]: \(error.reason)") }
        }
        if let file = trustedCredentialKeys { store.credentialKeys = try credentialKeys(file) }
        return store
    }

    /// The `trustedCredentialKeys` file, read within its bound.
    public func credentialKeys(_ file: String) throws(LockError) -> CredentialKeyList {
        let path = resolve(file)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw LockError(.invalidIdentity, "trustedCredentialKeys: cannot read \(path)") }
        defer { try? handle.close() }
        // One byte past the bound tells a file that is too long from one that fits.
        let data = (try? handle.read(upToCount: CredentialKeyList.maxBytes + 1)) ?? Data()
        guard let text = String(data: data, encoding: .utf8) else {
            throw LockError(.invalidIdentity, "trustedCredentialKeys \(path): not UTF-8 text")
        }
        do { return try CredentialKeyList(parsing: text) } catch {
            throw LockError(.invalidIdentity, "trustedCredentialKeys \(path): \(error)")
        }
    }

    /// The P-256 points of the PEM SPKI files `paths` (entries of `field`).
    func publicKeys(_ paths: [String], field: String) throws(LockError) -> [[UInt8]] {
        var out = [[UInt8]]()
        for (i, p) in paths.enumerated() {
            let path = resolve(p)
            guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else {
                throw LockError(.invalidIdentity, "\(field)[\(i)]: cannot read \(path)")
            }
            do { out.append(try Primitives.publicKey(spkiPEM: pem)) } catch {
                throw LockError(.invalidIdentity, "\(field)[\(i)] \(path): \(error.reason)")
            }
        }
        return out
    }

    /// The clock mode at first start.
    public func initialClock() throws(LockError) -> VirtualClock.Mode {
        guard let c = clock, c != "system" else { return .running(offset: 0) }
        guard let d = RFC3339.parse(c) else {
            throw LockError(.invalidConfiguration, "clock must be an RFC 3339 time like 2026-03-02T09:00:00Z or \"system\", got \"\(c)\"")
        }
        return .frozen(d)
    }

    /// A decoding error as the file's reader needs it: the field's dotted path and what is wrong
    /// (also used for the radios' part of the file, `RadioSettings` in LockRuntime).
    /// With the bytes `T` was decoded from, an error that names no field is explained from them
    /// (`JSONInspection`: a number no field can hold, a repeated key).
    public static func describe<T: Decodable>(_ error: Error, decoding type: T.Type, in data: Data) -> String {
        if case DecodingError.dataCorrupted(let ctx) = error, ctx.codingPath.isEmpty,
           let why = JSONInspection(data).explanation(decoding: type, from: data) {
            return why
        }
        return describe(error)
    }

    public static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let k, let ctx):
            return "missing field \((ctx.codingPath + [k]).map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            return "field \(ctx.codingPath.map(\.stringValue).joined(separator: ".")): \(ctx.debugDescription)"
        case DecodingError.dataCorrupted(let ctx):
            let at = ctx.codingPath.map(\.stringValue).joined(separator: ".")
            return (at.isEmpty ? "" : "field \(at): ") + ctx.debugDescription + ((ctx.underlyingError).map { " (\($0))" } ?? "")
        default:
            return "\(error)"
        }
    }
}
