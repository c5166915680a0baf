import ArgumentParser
import ByteCore
import Codecs
import Crypto
import Foundation
import LockRuntime
import OfflineUnlock

/// `lockbench key …`: create and inspect P-256 key pairs.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create and inspect keys: issuer, reader identity, credential.",
        discussion: """
        Every key is ECDSA P-256. Private keys are written as PEM PKCS#8 (NAME.key.pem, mode 0600), \
        public keys as PEM SPKI (NAME.pub.pem). A typical site:

          lockbench key issuer site/issuer           # signs the documents
          lockbench key reader site/front-door       # the reader: key, group id, sub id
          lockbench key credential site/alice-phone  # a phone's long-term key

        An issuer may instead be certified by an issuer CA the locks trust (config create --issuer-ca):

          lockbench key issuer-ca site/issuer-ca
          lockbench key issuer-cert --issuer site/issuer.pub.pem --ca-key site/issuer-ca.key.pem \\
              --out site/issuer.cert.pem
          lockbench doc issue --issuer-key site/issuer.key.pem --issuer-cert site/issuer.cert.pem …
        """,
        subcommands: [Issuer.self, IssuerCA.self, IssuerCert.self, Reader.self, ReaderCert.self, Credential.self, Show.self]
    )

    struct Output: ParsableArguments {
        @Argument(help: ArgumentHelp("Path prefix of the files to write: NAME.key.pem and NAME.pub.pem.", valueName: "name"))
        var name: String
        @Flag(help: "Overwrite existing files.")
        var force = false
        @Flag(help: "Print the result as JSON.")
        var json = false
    }

    struct Created: Encodable {
        var kind: String
        var privateKey: String
        var publicKey: String
        var publicKeyHex: String
        var kid: String?
        var keyHash: String?
        var readerIdentity: String?
        var groupID: String?
        var subID: String?
    }

    static func writePair(_ out: Output, kind: String) throws -> (P256.Signing.PrivateKey, Created) {
        let key = P256.Signing.PrivateKey()
        let priv = out.name + ".key.pem", pub = out.name + ".pub.pem"
        try KeyFiles.writePrivateKey(key, to: priv, force: out.force)
        try KeyFiles.write(Data(key.publicKey.pemRepresentation.utf8), to: pub, force: out.force)
        let point = Primitives.point(of: key)
        return (key, Created(kind: kind, privateKey: priv, publicKey: pub, publicKeyHex: Hex.encode(point)))
    }

    static func report(_ c: Created, json: Bool) {
        if json { print(KeyFiles.json(c)); return }
        print("\(c.kind) key: \(c.privateKey) (private), \(c.publicKey) (public)")
        if let kid = c.kid { print("kid: \(kid)") }
        if let h = c.keyHash { print("key hash (for revocation): \(h)") }
        if let r = c.readerIdentity { print("reader identity: \(r)  group \(c.groupID!)  sub \(c.subID!)") }
    }

    struct Issuer: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an issuer key pair (signs access and revocation documents).",
            discussion: "Locks trust the issuer by its public key (list NAME.pub.pem in the lock config's trustedIssuers); documents name it by kid = SHA-256(\"key-identifier\" ‖ key)[0:8].")
        @OptionGroup var output: Output
        func run() throws {
            var (key, created) = try KeyCommand.writePair(output, kind: "issuer")
            created.kid = Hex.encode(CoseSign1.keyIdentifier(issuerPublicKey: Primitives.point(of: key)))
            KeyCommand.report(created, json: output.json)
        }
    }

    struct IssuerCA: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "issuer-ca",
            abstract: "Create an issuer CA key pair (signs issuer certificates).",
            discussion: "Locks trust the CA by its public key (config create --issuer-ca NAME.pub.pem, the lock config's trustedIssuerCAs); a document whose issuerAuth carries an issuer certificate the CA signed (x5chain, COSE header 33) is then from a trusted issuer.")
        @OptionGroup var output: Output
        func run() throws {
            let (_, created) = try KeyCommand.writePair(output, kind: "issuer CA")
            KeyCommand.report(created, json: output.json)
        }
    }

    struct IssuerCert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "issuer-cert",
            abstract: "Certify an issuer's public key with an issuer CA: an X.509 certificate (PEM) for doc issue --issuer-cert.",
            discussion: "ECDSA-SHA256 over P-256, as the official test plan's issuer certificates. The certificate must be valid when each document is signed and when a lock reads it.")
        @Option(help: ArgumentHelp("The issuer's public key (PEM SPKI; a private key file works too).", valueName: "file"))
        var issuer: String
        @Option(name: .customLong("ca-key"), help: ArgumentHelp("The issuer CA's private key (PEM).", valueName: "file"))
        var caKey: String
        @Option(name: .customLong("valid-from"), help: ArgumentHelp("notBefore (ISO-8601); default: now.", valueName: "time"))
        var validFrom: String?
        @Option(name: .customLong("valid-until"), help: ArgumentHelp("notAfter (ISO-8601); default: 1 year after notBefore.", valueName: "time"))
        var validUntil: String?
        @Option(help: ArgumentHelp("Where to write the certificate (PEM).", valueName: "file"))
        var out: String
        @Flag(help: "Overwrite --out if it exists.")
        var force = false

        func run() throws {
            let issuerKey = try KeyFiles.publicKey(issuer, what: "issuer key")
            let ca = try KeyFiles.privateKey(caKey, what: "issuer CA key")
            let from = try validFrom.map { try KeyFiles.time($0, flag: "--valid-from") } ?? Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let until = try validUntil.map { try KeyFiles.time($0, flag: "--valid-until") } ?? from.addingTimeInterval(365 * 86_400)
            guard until > from else { throw UserError(message: "--valid-until \(RFC3339.format(until)) is not after notBefore \(RFC3339.format(from))") }
            let der = try IssuerCertificate.issue(subjectPublicKey: issuerKey, caKey: ca, serialNumber: Primitives.randomBytes(8),
                                                  notBefore: from, notAfter: until)
            try KeyFiles.write(Data(IssuerCertificate.pem(der: der).utf8), to: out, force: force)
            print("issuer certificate: \(out) (issuer kid \(Hex.encode(CoseSign1.keyIdentifier(issuerPublicKey: issuerKey))), valid \(RFC3339.format(from))–\(RFC3339.format(until)))")
        }
    }

    struct Credential: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a credential (phone) long-term key pair.",
            discussion: "Access documents bind NAME.pub.pem; the credential proves possession in AUTH1. The key hash printed is what a revocation entry names.")
        @OptionGroup var output: Output
        func run() throws {
            var (key, created) = try KeyCommand.writePair(output, kind: "credential")
            created.keyHash = Hex.encode(RevocationEntry.hash(credentialPublicKey: Primitives.point(of: key)))
            KeyCommand.report(created, json: output.json)
        }
    }

    struct Reader: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a reader identity: signing key, 16-byte group id, 16-byte sub id.",
            discussion: """
            Writes NAME.key.pem, NAME.pub.pem and NAME.reader.json. Readers of one site or door group \
            share a group id (pass --group to reuse one); each reader has its own sub id. Access \
            documents open a group (every reader in it) or one GROUP:SUB.
            """)
        @OptionGroup var output: Output
        @Option(help: ArgumentHelp("Reader group id, 32 hex digits (default: random).", valueName: "hex"))
        var group: String?
        @Option(help: ArgumentHelp("Reader sub id, 32 hex digits (default: random).", valueName: "hex"))
        var sub: String?

        func validate() throws {
            do {
                if let group { _ = try KeyFiles.id16(group, flag: "--group") }
                if let sub { _ = try KeyFiles.id16(sub, flag: "--sub") }
            } catch let e as UserError { throw ValidationError(e.message) }
        }

        func run() throws {
            var (_, created) = try KeyCommand.writePair(output, kind: "reader")
            let g = try group.map { try KeyFiles.id16($0, flag: "--group") } ?? Primitives.randomBytes(16)
            let s = try sub.map { try KeyFiles.id16($0, flag: "--sub") } ?? Primitives.randomBytes(16)
            let identity = ReaderIdentityFile(signingKey: (created.privateKey as NSString).lastPathComponent,
                                              publicKey: (created.publicKey as NSString).lastPathComponent,
                                              groupID: Hex.encode(g), subID: Hex.encode(s))
            let path = output.name + ".reader.json"
            try KeyFiles.write(Data((KeyFiles.json(identity) + "\n").utf8), to: path, force: output.force)
            created.readerIdentity = path
            created.groupID = identity.groupID
            created.subID = identity.subID
            KeyCommand.report(created, json: output.json)
        }
    }

    struct ReaderCert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reader-cert",
            abstract: "Issue a reader certificate: a reader issuer CA signs a reader's public key.",
            discussion: """
            Writes NAME.cert.der, the X.509 certificate in the Aliro compressed profile (one common name \
            each for issuer and subject, UTCTime validity, authority key id = SHA-1 of the CA key). The CA \
            is any P-256 key pair (`lockbench key issuer site/reader-ca`). Name the certificate in the \
            lock configuration (`config create` with the certificate, or "reader": {"certificate": …}); \
            phones then trust the CA for the lock's group (docs/protocol.md §6a).
            """)
        @Argument(help: ArgumentHelp("Path prefix of the file to write: NAME.cert.der.", valueName: "name"))
        var name: String
        @Option(name: .customLong("issuer-ca"), help: ArgumentHelp("The reader issuer CA's private key (PEM).", valueName: "ca.key.pem"))
        var issuerCA: String
        @Option(name: .customLong("reader"), help: ArgumentHelp("The reader's public key (PEM), or its private key, or its NAME.reader.json.", valueName: "file"))
        var reader: String
        @Option(help: ArgumentHelp("Days the certificate is valid from now (default: the compressed profile's default validity, 2020-01-01 to 2049-01-01, which the compressed form leaves out).", valueName: "days"))
        var days: Int?
        @Option(help: ArgumentHelp("Serial number, up to 20 bytes of hex (default 01, which the compressed form leaves out).", valueName: "hex"))
        var serial: String?
        @Option(help: ArgumentHelp("Issuer common name, at most 32 bytes (default \"issuer\", which the compressed form leaves out).", valueName: "name"))
        var issuerName = "issuer"
        @Option(help: ArgumentHelp("Subject common name, at most 32 bytes (default \"subject\").", valueName: "name"))
        var subjectName = "subject"
        @Flag(help: "Overwrite an existing file.")
        var force = false

        func validate() throws {
            if let days, !(1...36500).contains(days) || Date().addingTimeInterval(Double(days) * 86_400) > ReaderCertificate.date(Array("491231235959Z".utf8))! {
                throw ValidationError("--days must be at least 1 and end before 2050 (the certificate's UTCTime carries 1950 to 2049)")
            }
            if let serial, !(1...ReaderCertificate.maxSerialNumber).contains(Hex.decode(serial)?.count ?? 0) {
                throw ValidationError("--serial must be 1 to \(ReaderCertificate.maxSerialNumber) bytes of hex")
            }
            guard issuerName.utf8.count <= ReaderCertificate.maxName, subjectName.utf8.count <= ReaderCertificate.maxName else {
                throw ValidationError("--issuer-name and --subject-name are at most \(ReaderCertificate.maxName) bytes")
            }
        }

        func run() throws {
            let ca = try KeyFiles.privateKey(issuerCA, what: "reader issuer CA key")
            let subject: [UInt8]
            if let (identity, dir) = try? ReaderIdentityFile.load(reader) {
                let path = identity.publicKey.hasPrefix("/") ? identity.publicKey : dir + "/" + identity.publicKey
                subject = try KeyFiles.publicKey(path, what: "reader public key")
            } else if let key = try? KeyFiles.privateKey(reader, what: "reader key") {
                subject = Primitives.point(of: key)
            } else {
                subject = try KeyFiles.publicKey(reader, what: "reader key")
            }
            // Defaults the compressed form leaves out keep AUTH1 with the certificate in one APDU
            // (NFC_RDR_STANDARD_CERT_IN_AUTH1_NO_CHAINING).
            let now = Date()
            let validity = days.map { (now, now.addingTimeInterval(Double($0) * 86_400)) }
                ?? (ReaderCertificate.date(ReaderCertificate.defaultNotBefore)!, ReaderCertificate.date(ReaderCertificate.defaultNotAfter)!)
            let cert = try ReaderCertificate.issue(subjectPublicKey: subject, issuerKey: ca,
                                                   serialNumber: serial.flatMap(Hex.decode) ?? ReaderCertificate.defaultSerialNumber,
                                                   issuer: issuerName, subject: subjectName, notBefore: validity.0, notAfter: validity.1)
            let der = cert.x509(issuerPublicKey: Primitives.point(of: ca))
            let path = name + ".cert.der"
            try KeyFiles.write(Data(der), to: path, force: force)
            print("reader certificate: \(path) (\(der.count) bytes; compressed \(cert.compressed().count) bytes)")
            print("subject key \(subject.hex.prefix(16))…, issuer CA \(Primitives.point(of: ca).hex.prefix(16))…, valid until \(String(decoding: cert.notAfter, as: UTF8.self))")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a key file: public key, issuer kid, revocation key hash, key slot.")
        @Argument(help: ArgumentHelp("A PEM private (PKCS#8) or public (SPKI) key file.", valueName: "file"))
        var file: String
        @Flag(help: "Print as JSON.")
        var json = false

        struct Info: Encodable {
            var file: String
            var type: String
            var publicKey: String
            var kid: String
            var keyHash: String
            var keySlot: String
        }

        func run() throws {
            let pem = try KeyFiles.readText(file, what: "key file")
            let point = try KeyFiles.publicKey(file, what: "key file")
            let info = Info(file: file, type: pem.contains("PRIVATE KEY") ? "private" : "public", publicKey: Hex.encode(point),
                            kid: Hex.encode(CoseSign1.keyIdentifier(issuerPublicKey: point)),
                            keyHash: Hex.encode(RevocationEntry.hash(credentialPublicKey: point)),
                            keySlot: Hex.encode(Primitives.sha1(point).prefix(8)))
            if json { print(KeyFiles.json(info)); return }
            print("""
            \(info.file): P-256 \(info.type) key
              public key  \(info.publicKey)
              kid         \(info.kid)   (as an issuer)
              key hash    \(info.keyHash)   (as a credential, in revocation entries)
              key slot    \(info.keySlot)   (as a credential, in AUTH1)
            """)
        }
    }
}
