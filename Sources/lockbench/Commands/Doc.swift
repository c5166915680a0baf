import ArgumentParser
import ByteCore
import Codecs
import Crypto
import Foundation
import LockRuntime
import OfflineUnlock

/// `lockbench doc …`: issue, revoke, show.
struct DocCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doc",
        abstract: "Issue access documents and revocation documents; show any document.",
        discussion: """
        Documents are CBOR files (docs/documents.md): an issuer-signed COSE_Sign1 over a mobile security \
        object that binds a credential key to access rules and a validity window.

          lockbench doc issue --issuer-key site/issuer.key.pem \\
              --credential site/alice-phone.pub.pem \\
              --reader-identity site/front-door.reader.json --valid-for 8h \\
              --out alice.cbor
          lockbench doc revoke --issuer-key site/issuer.key.pem \\
              --credential site/alice-phone.pub.pem --out revoked.cbor
          lockbench doc revoke --issuer-key site/issuer.key.pem --previous revoked.cbor \\
              --credential site/bob-phone.pub.pem --out revoked-2.cbor
          lockbench doc show alice.cbor --issuer site/issuer.pub.pem
        """,
        subcommands: [Issue.self, Revoke.self, Show.self]
    )

    struct Signing: ParsableArguments {
        @Option(name: .customLong("issuer-key"), help: ArgumentHelp("The issuer's private key (PEM PKCS#8).", valueName: "file"))
        var issuerKey: String
        @Option(help: ArgumentHelp("Issue as of this time instead of the system clock (ISO-8601, e.g. 2026-03-02T09:00:00Z); --valid-for counts from it.", valueName: "time"))
        var now: String?
        @Option(name: .customLong("issuer-cert"), help: ArgumentHelp("The issuer's certificate (PEM or DER, from `key issuer-cert`): carried in issuerAuth's header (x5chain, 33) so that locks trusting its issuer CA accept the document.", valueName: "file"))
        var issuerCert: String?
        @Flag(name: .customLong("no-kid"), help: "With --issuer-cert: leave the kid out of issuerAuth; the certificate alone names the issuer.")
        var noKid = false
        @Option(help: ArgumentHelp("Where to write the document (CBOR).", valueName: "file"))
        var out: String
        @Flag(help: "Overwrite --out if it exists.")
        var force = false
        @Flag(help: "Print the issued document as JSON (as `doc show --json`).")
        var json = false

        /// The certificate's DER, checked to certify `issuer` and to be valid at `signed`.
        func certificate(for issuer: P256.Signing.PrivateKey, signed: Date) throws -> [UInt8]? {
            guard let issuerCert else {
                if noKid { throw UserError(message: "--no-kid needs --issuer-cert: without a kid or a certificate no lock can find the issuer") }
                return nil
            }
            let certificate: IssuerCertificate
            do { certificate = try IssuerCertificate(parsing: try IssuerCertificate.der(pemOrDER: try KeyFiles.readBytes(issuerCert, what: "issuer certificate"))) } catch let e as X509Error {
                throw UserError(message: "--issuer-cert \(issuerCert): \(e.reason)")
            }
            guard certificate.publicKey == Primitives.point(of: issuer) else {
                throw UserError(message: "--issuer-cert \(issuerCert) certifies another key than --issuer-key")
            }
            guard certificate.isValid(at: signed) else {
                throw UserError(message: "--issuer-cert \(issuerCert) is valid \(RFC3339.format(certificate.notBefore))–\(RFC3339.format(certificate.notAfter)), not at the signing time \(RFC3339.format(signed)); locks would refuse the document")
            }
            return certificate.der
        }

        func issueTime() throws -> Date {
            try now.map { try KeyFiles.time($0, flag: "--now") } ?? Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        }
    }

    /// The document rendered for `doc show` (LockRuntime's `DocumentJSON`); bytes that are no
    /// document are a usage error (exit 2).
    static func show(file: String, bytes: [UInt8], trust: TrustStore?) throws -> DocumentJSON {
        do { return try DocumentJSON(file: file, bytes: bytes, trust: trust) } catch { throw UserError(message: error.message) }
    }

    static func finish(_ bytes: [UInt8], signing: Signing, issuer: P256.Signing.PrivateKey) throws {
        try KeyFiles.write(Data(bytes), to: signing.out, force: signing.force)
        // A certified issuer is checked by its CA, which the lock knows and this command does not.
        let shown = try show(file: signing.out, bytes: bytes,
                             trust: signing.issuerCert == nil ? try TrustStore(issuerPublicKeys: [Primitives.point(of: issuer)]) : nil)
        print(signing.json ? KeyFiles.json(shown) : shown.text)
    }

    struct Issue: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue an access document for a credential key.",
            discussion: """
            The validity window is --valid-for from now (or from --valid-from), or --valid-from to \
            --valid-until. Locks refuse documents longer than their policy's maxDocumentLifetime. \
            Readers: --reader GROUP (every reader of the group) or GROUP:SUB (one reader), hex; or \
            --reader-identity FILE (that reader's group and sub; add --whole-group for the group). \
            Schedules are weekly windows in the lock's schedule time zone (UTC unless the lock config \
            sets scheduleUTCOffsetMinutes): "mon-fri 08:00-18:00", "weekends 10:00-14:00", "daily \
            06:00-22:00"; several --schedule flags mean any of them. No schedule: any time.
            """)
        @OptionGroup var signing: Signing
        @Option(help: ArgumentHelp("The credential's public key (PEM SPKI; a private key file works too).", valueName: "file"))
        var credential: String
        @Option(help: ArgumentHelp("A reader group or one reader this document opens: GROUP or GROUP:SUB (32 hex digits each). Repeatable.", valueName: "group[:sub]"))
        var reader: [String] = []
        @Option(name: .customLong("reader-identity"), help: ArgumentHelp("A reader identity file (from `key reader`); repeatable.", valueName: "file"))
        var readerIdentity: [String] = []
        @Flag(name: .customLong("whole-group"), help: "With --reader-identity: open every reader of its group, not just that reader.")
        var wholeGroup = false
        @Option(name: .customLong("valid-for"), help: ArgumentHelp("Validity length: 90s, 30m, 8h, 7d, 1h30m.", valueName: "duration"))
        var validFor: String?
        @Option(name: .customLong("valid-from"), help: ArgumentHelp("Start of validity (ISO-8601); default: now.", valueName: "time"))
        var validFrom: String?
        @Option(name: .customLong("valid-until"), help: ArgumentHelp("End of validity (ISO-8601).", valueName: "time"))
        var validUntil: String?
        @Option(help: ArgumentHelp("A weekly window, e.g. \"mon-fri 08:00-18:00\". Repeatable.", valueName: "days hh:mm-hh:mm"))
        var schedule: [String] = []
        @Option(help: ArgumentHelp("Document id: up to 16 bytes, as hex or text (default: 8 random bytes).", valueName: "id"))
        var id: String?
        @Option(help: ArgumentHelp("The access document this one replaces (re-grant, schedule change): this one is signed strictly after it, so a lock caching it steps up even within the same second, and carries its validityIteration + 1.", valueName: "file"))
        var previous: String?
        @Flag(name: .customLong("time-verification-required"),
              help: "Set the MSO's timeVerificationRequired (key 7): a lock accepts the document only while its clock is trusted, and the document's signed time never restores a lock's clock after a power loss (default: false).")
        var timeVerificationRequired = false

        func validate() throws {
            if validFor == nil && validUntil == nil { throw ValidationError("give --valid-for DURATION or --valid-until TIME") }
            if validFor != nil && validUntil != nil { throw ValidationError("--valid-for and --valid-until exclude each other") }
            if reader.isEmpty && readerIdentity.isEmpty { throw ValidationError("name at least one --reader GROUP[:SUB] or --reader-identity FILE") }
        }

        func run() throws {
            let issuer = try KeyFiles.privateKey(signing.issuerKey, what: "issuer key")
            let credentialKey = try KeyFiles.publicKey(credential, what: "credential key")
            var prior: AccessDocument?
            if let previous {
                do { prior = try AccessDocument(parsing: try KeyFiles.readBytes(previous, what: "previous access document")) } catch let e as DocumentError {
                    throw UserError(message: "--previous \(previous): \(e.reason); give the access document this one replaces (CBOR)")
                }
            }
            let now = try signing.issueTime()
            let signed = SigningOrder.signedTime(now: now, after: prior?.validity.signed)
            let iteration = try prior.map { p -> Int in
                let i = p.validity.validityIteration ?? 0
                guard i < Int.max else { throw UserError(message: "--previous \(previous ?? ""): validityIteration \(i) has no successor") }
                return i + 1
            }
            let from = try validFrom.map { try KeyFiles.time($0, flag: "--valid-from") } ?? now
            let until = try validUntil.map { try KeyFiles.time($0, flag: "--valid-until") }
                ?? from.addingTimeInterval(try KeyFiles.duration(validFor!, flag: "--valid-for"))
            guard until > from else { throw UserError(message: "the validity window ends (\(RFC3339.format(until))) before it starts (\(RFC3339.format(from)))") }
            var rules = [ReaderRule]()
            do {
                for r in reader { rules.append(try ReaderRule(parsing: r)) }
                for path in readerIdentity {
                    let (f, _) = try ReaderIdentityFile.load(path)
                    rules.append(try ReaderRule(groupID: Hex.decode(f.groupID)!, subID: wholeGroup ? nil : Hex.decode(f.subID)!))
                }
                let schedules = try schedule.map { try WeeklySchedule(parsing: $0) }
                let docID: [UInt8]
                if let id {
                    docID = Hex.decode(id).flatMap { id.count % 2 == 0 && !$0.isEmpty ? $0 : nil } ?? Array(id.utf8)
                } else {
                    docID = Primitives.randomBytes(8)
                }
                let access = try AccessData(id: docID, readers: rules, schedules: schedules)
                let doc = try AccessDocument.issue(access: access, credentialPublicKey: credentialKey,
                                                   validity: .init(signed: signed, validFrom: from, validUntil: until, validityIteration: iteration),
                                                   issuerKey: issuer, issuerCertificate: try signing.certificate(for: issuer, signed: signed),
                                                   includeKeyID: !signing.noKid, timeVerificationRequired: timeVerificationRequired)
                try DocCommand.finish(doc.encoded(), signing: signing, issuer: issuer)
            } catch let e as DocumentError {
                throw UserError(message: e.reason)
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a revocation document (Aliro RevocationData: a whole list, or a change to one).",
            discussion: """
            By default the document is a whole list (change mode OVERWRITE): a lock replaces its \
            list of this issuer with it, so it names everything still revoked. With --append it adds \
            its entries to the list the lock holds; --remove-credential, --remove-key-hash and \
            --remove-doc-id take entries out (after adding). A lock applies an issuer's documents in the order they were signed and ignores \
            one signed before the last it applied: give --previous FILE (the issuer's last revocation \
            document) and this one is signed strictly after it, even within the same second. Entries \
            name a credential (its key file, or --key-hash as `key show` prints) or an access \
            document id, and expire (--entry-expiry, default: the document's own expiry) once the \
            revoked documents cannot be valid any more.
            """)
        @OptionGroup var signing: Signing
        @Option(help: ArgumentHelp("The issuer's previous revocation document: this one is signed strictly after it, so a lock holding it applies this one.", valueName: "file"))
        var previous: String?
        @Flag(help: "Change mode APPEND: add to the lock's list instead of replacing it (OVERWRITE, the default).")
        var append = false
        @Option(help: ArgumentHelp("Revoke this credential key (PEM). Repeatable.", valueName: "file"))
        var credential: [String] = []
        @Option(name: .customLong("key-hash"), help: ArgumentHelp("Revoke by SHA-256 of the 65-byte credential key, hex. Repeatable.", valueName: "hex"))
        var keyHash: [String] = []
        @Option(name: .customLong("doc-id"), help: ArgumentHelp("Revoke an access document id (hex or text). Repeatable.", valueName: "id"))
        var docID: [String] = []
        @Option(name: .customLong("remove-credential"), help: ArgumentHelp("Take this credential key's entry out of the lock's list (PEM). Repeatable.", valueName: "file"))
        var removeCredential: [String] = []
        @Option(name: .customLong("remove-key-hash"), help: ArgumentHelp("Take the entry with this key hash out of the lock's list. Repeatable.", valueName: "hex"))
        var removeKeyHash: [String] = []
        @Option(name: .customLong("remove-doc-id"), help: ArgumentHelp("Take the entry with this access document id out of the lock's list. Repeatable.", valueName: "id"))
        var removeDocID: [String] = []
        @Option(name: .customLong("valid-for"), help: ArgumentHelp("How long locks accept this document (default 30d).", valueName: "duration"))
        var validFor: String = "30d"
        @Option(name: .customLong("entry-expiry"), help: ArgumentHelp("When the entries lapse (ISO-8601; default: the document's expiry).", valueName: "time"))
        var entryExpiry: String?
        @Option(help: ArgumentHelp(visibility: .hidden))
        var serial: String?

        func validate() throws {
            if serial != nil {
                throw ValidationError("--serial: revocation documents carry no serial any more (Aliro's RevocationData has a change mode where LockBench wrote one; locks order an issuer's lists by their signed time): drop it, and give --previous FILE to sign after the issuer's last list")
            }
        }

        func run() throws {
            let issuer = try KeyFiles.privateKey(signing.issuerKey, what: "issuer key")
            var prior: RevocationDocument?
            if let previous {
                do { prior = try RevocationDocument(parsing: try KeyFiles.readBytes(previous, what: "previous revocation document")) } catch let e as DocumentError {
                    throw UserError(message: "--previous \(previous): \(e.reason); give the issuer's last revocation document (CBOR)")
                }
            }
            let now = SigningOrder.signedTime(now: try signing.issueTime(), after: prior?.issued)
            let expiry = now.addingTimeInterval(try KeyFiles.duration(validFor, flag: "--valid-for"))
            let entryEnd = try entryExpiry.map { try KeyFiles.time($0, flag: "--entry-expiry") } ?? expiry
            do {
                let data = RevocationData(changeMode: append ? .append : .overwrite,
                                          entries: try Self.entries(credentials: credential, keyHashes: keyHash, docIDs: docID, expiry: entryEnd, flag: ""),
                                          entriesToRemove: try Self.entries(credentials: removeCredential, keyHashes: removeKeyHash, docIDs: removeDocID, expiry: nil, flag: "remove-"))
                let doc = RevocationDocument.issue(revocation: data, issued: now,
                                                   expiry: expiry, issuerKey: issuer, issuerCertificate: try signing.certificate(for: issuer, signed: now),
                                                   includeKeyID: !signing.noKid)
                try DocCommand.finish(doc.encoded(), signing: signing, issuer: issuer)
            } catch let e as DocumentError {
                throw UserError(message: e.reason)
            }
        }

        /// The entries named by one set of options (`--credential`, `--key-hash`, `--doc-id`, or
        /// their `--remove-` forms).
        static func entries(credentials: [String], keyHashes: [String], docIDs: [String], expiry: Date?, flag: String) throws -> [RevocationEntry] {
            var entries = [RevocationEntry]()
            for c in credentials {
                entries.append(try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: try KeyFiles.publicKey(c, what: "credential key")), expiry: expiry))
            }
            for h in keyHashes {
                guard let b = Hex.decode(h) else { throw UserError(message: "--\(flag)key-hash \"\(h)\" is not hex") }
                entries.append(try RevocationEntry(publicKeyHash: b, expiry: expiry))
            }
            for d in docIDs {
                let b = Hex.decode(d).flatMap { d.count % 2 == 0 && !$0.isEmpty ? $0 : nil } ?? Array(d.utf8)
                entries.append(try RevocationEntry(documentID: b, expiry: expiry))
            }
            return entries
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show an access or revocation document; verify it with --issuer.",
            discussion: "Exit status: 0 shown (and verified, with --issuer); 1 the signature or a digest does not verify; 2 not a document.")
        @Argument(help: ArgumentHelp("A document file (CBOR).", valueName: "file"))
        var file: String
        @Option(help: ArgumentHelp("Verify against this issuer public key (PEM). Repeatable.", valueName: "file"))
        var issuer: [String] = []
        @Option(name: .customLong("issuer-ca"), help: ArgumentHelp("Verify a certified issuer against this issuer CA public key (PEM). Repeatable.", valueName: "file"))
        var issuerCA: [String] = []
        @Flag(help: "Print as JSON.")
        var json = false

        func run() throws {
            let bytes = try KeyFiles.readBytes(file, what: "document")
            let trust = issuer.isEmpty && issuerCA.isEmpty ? nil
                : try TrustStore(issuerPublicKeys: try issuer.map { try KeyFiles.publicKey($0, what: "issuer key") },
                                 issuerCAPublicKeys: try issuerCA.map { try KeyFiles.publicKey($0, what: "issuer CA key") })
            let shown = try DocCommand.show(file: file, bytes: bytes, trust: trust)
            print(json ? KeyFiles.json(shown) : shown.text)
            if trust != nil && !shown.verified { throw ExitCode(ExitCodes.negative) }
        }
    }
}
