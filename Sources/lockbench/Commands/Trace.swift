import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Conformance
import Foundation
import Lock
import LockRuntime

/// `lockbench trace FILE`: a transcript, a btsnoop capture or a hex dump of APDUs, in words.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Decode a transcript, a btsnoop capture or a hex dump of APDUs: names, TLVs, status words, decrypted payloads.",
        discussion: """
        FILE is one of:
        - a LockBench transcript (`conformance … --transcript FILE`, docs/conformance.md);
        - a btsnoop capture (`lock run --btsnoop`, `ble phone --btsnoop`, Android's HCI snoop log): \
        the APDUs are taken from the LE credit-based L2CAP channels;
        - a hex dump, one APDU per line, `>` before a command and `<` before an answer (the \
        `C LABEL: hex` / `R LABEL: hex` lines of `lock transact --transcript` are read too);
        - the JSON of `lock transact --json --transcript` (its `apdus` list).

        Every command and answer is printed with its name, its TLVs by name and its status word in \
        words. The secure channel opens when the keys are at hand: a transcript written by `conformance \
        reader --transcript-secrets` carries LockBench's ephemeral private key (the ECDH secret cannot be \
        derived from long-term keys alone), --reader-key or --lock-config gives the reader group key the \
        key schedule's salt needs, and --lock-config adds the lock's cached FAST keys, which open FAST \
        transactions of any phone the lock knows with no secret at all.

          lockbench trace run.transcript --reader-key door.reader.json
          lockbench trace lock.btsnoop --lock-config door.lock.json
        """)

    @Argument(help: ArgumentHelp("The transcript, btsnoop capture or hex dump.", valueName: "file"))
    var file: String

    @Option(name: .customLong("reader-key"), parsing: .upToNextOption, help: ArgumentHelp("The reader's key: an identity (NAME.reader.json), a lock configuration, or a public/private key PEM; repeatable.", valueName: "file"))
    var readerKeys: [String] = []

    @Option(name: .customLong("lock-config"), help: ArgumentHelp("A lock configuration: its reader key, and the FAST keys cached in its state (the lock must not be running).", valueName: "file"))
    var lockConfig: String?

    @Option(name: .customLong("credential-key"), help: ArgumentHelp("With --kpersistent: the phone's public (or private) key PEM, to open FAST cryptograms with a Kpersistent from the phone's own store.", valueName: "file"))
    var credentialKey: String?

    @Option(help: ArgumentHelp("With --credential-key: the phone's Kpersistent for this reader, 64 hex digits.", valueName: "hex"))
    var kpersistent: String?

    @Flag(help: "One JSON document: {sessions: [{id, attributes, apdus: [{direction, hex, notes}]}]}.")
    var json = false

    /// The `--json` document: each APDU with the lines the text rendering prints under it.
    struct TraceJSON: Encodable {
        struct APDU: Encodable { var direction: String; var hex: String; var notes: [String] }
        struct Session: Encodable { var id: Int; var attributes: [String: String]; var apdus: [APDU] }
        var sessions: [Session]
    }

    func validate() throws {
        if (credentialKey == nil) != (kpersistent == nil) { throw ValidationError("--credential-key and --kpersistent go together") }
        if let kpersistent, Hex.decode(kpersistent)?.count != 32 { throw ValidationError("--kpersistent must be 32 bytes of hex") }
    }

    func run() throws {
        let bytes = try KeyFiles.readBytes(file, what: "trace input")
        var transcript: Transcript
        if bytes.starts(with: Array("btsnoop\0".utf8)) {
            let capture: BTSnoopCapture
            do { capture = try BTSnoopCapture(parsing: bytes) } catch {
                throw UserError(message: "\(file): \(error.description)")
            }
            transcript = Transcript()
            var lines = ""
            for apdu in capture.accessAPDUs() { lines += (apdu.isCommand ? "> " : "< ") + apdu.bytes.hex + "\n" }
            do { transcript = try Transcript(parsing: lines) } catch { throw UserError(message: "\(file): \(error)") }
            for i in transcript.sessions.indices { transcript.sessions[i].attributes["interface"] = "ble" }
            let note = "btsnoop: \(capture.records.count) HCI packets, \(transcript.sessions.reduce(0) { $0 + $1.entries.count }) APDUs on access channels"
            if json { emitError(note) } else { emitLine(note) }   // stdout holds only JSON with --json
        } else {
            guard let text = String(bytes: bytes, encoding: .utf8) else {
                throw UserError(message: "\(file) is neither a btsnoop capture nor text (a transcript or hex dump)")
            }
            do { transcript = try Transcript(parsing: Self.apduLines(json: text, file: file) ?? text) } catch let e as UserError {
                throw e
            } catch { throw UserError(message: "\(file): \(error)") }
        }
        guard !transcript.sessions.isEmpty else { throw UserError(message: "\(file) holds no APDU") }
        var keys = TraceKeys()
        for path in readerKeys { try add(readerKey: path, to: &keys) }
        if let lockConfig {
            try add(readerKey: lockConfig, to: &keys)
            let service = try LockFiles.service(lockConfig)
            keys.persistentKeys += service.withReader { $0.fastCache.all.map { Transcript.PersistentKey(credentialKey: $0.key, key: $0.persistent) } }
        }
        if let credentialKey, let kpersistent {
            let key: [UInt8]
            if let pub = try? KeyFiles.publicKey(credentialKey, what: "credential key") { key = pub } else {
                key = try KeyFiles.privateKey(credentialKey, what: "credential key").publicBytes
            }
            keys.persistentKeys.append(Transcript.PersistentKey(credentialKey: key, key: Hex.decode(kpersistent)!))
        }
        let decoder = TraceDecoder(keys: keys)
        if json {
            let sessions = transcript.sessions.map { session in
                TraceJSON.Session(id: session.id, attributes: session.attributes, apdus: zip(session.entries, decoder.decode(session, in: transcript)).map { entry, notes in
                    TraceJSON.APDU(direction: entry.direction == .command ? "command" : "response", hex: entry.bytes.hex, notes: notes)
                })
            }
            emitLine(KeyFiles.json(TraceJSON(sessions: sessions)))
            return
        }
        print(decoder.render(transcript), terminator: "")
    }

    /// The `apdus` lines of a `lock transact --json --transcript` document; nil when `text` is not
    /// JSON (a transcript or a hex dump).
    static func apduLines(json text: String, file: String) throws -> String? {
        guard text.drop(while: \.isWhitespace).first == "{" else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw UserError(message: "\(file) starts with { but is not a JSON object")
        }
        guard let apdus = object["apdus"] as? [String] else {
            throw UserError(message: "\(file): a JSON document without an `apdus` list of strings; write it with `lock transact --json --transcript`")
        }
        return apdus.joined(separator: "\n") + "\n"
    }

    func add(readerKey path: String, to keys: inout TraceKeys) throws {
        if let (identity, dir) = try? ReaderIdentityFile.load(path) {
            let pub = try KeyFiles.publicKey(identity.publicKey.hasPrefix("/") ? identity.publicKey : dir + "/" + identity.publicKey, what: "reader public key")
            keys.readerKeys[try KeyFiles.id16(identity.groupID, flag: "\(path) groupID")] = pub
            return
        }
        if let config = try? LockConfiguration.load(path: path) {
            do {
                keys.readerKeys[try config.readerIdentity().groupID] = try config.readerSigningKey().publicBytes
            } catch {
                throw UserError(message: "\(path): \(error.description)")
            }
            return
        }
        if let pub = try? KeyFiles.publicKey(path, what: "reader key") { keys.readerPublicKeys.append(pub); return }
        if let priv = try? KeyFiles.privateKey(path, what: "reader key") { keys.readerPublicKeys.append(priv.publicBytes); return }
        throw UserError(message: "--reader-key \(path): neither a reader identity, a lock configuration, nor a key PEM")
    }
}
