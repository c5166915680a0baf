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
        subcommands: [Issuer.self, IssuerCA.self, IssuerCert.self, Reader.self, Credential.self, Show.self]
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
