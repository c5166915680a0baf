import ByteCore
import Foundation
import Synchronization

/// A LockBench transcript: the APDUs of one or more transactions, and what a decoder needs to
/// open their secure channels. Text, one item per line (docs/conformance.md "Transcripts"):
///
///     # comment; indented lines are decoded text, ignored when read
///     @session 2 check=auth1.standard interface=nfc
///     > 80800000814101…00                     a command APDU (hex, spaces allowed)
///     < 864104…9000                           its response
///     @reader-key <group id hex> <public key hex>
///     @secret 2 ephemeral-private <32 bytes>  only with --transcript-secrets
///     @secret 2 kpersistent <credential key 65 bytes> <32 bytes>
///
/// The same reader takes a bare hex dump (`>`/`<` lines only) and the `C LABEL: hex` / `R LABEL:
/// hex` lines of `lockbench lock transact --transcript`; a SELECT of the access AID after an
/// AUTH0 starts a new session when no `@session` line says so.
public struct Transcript: Equatable, Sendable {
    public enum Direction: String, Sendable { case command = ">", response = "<" }

    public struct Entry: Equatable, Sendable {
        public var direction: Direction
        public var bytes: [UInt8]
        public init(_ direction: Direction, _ bytes: [UInt8]) {
            self.direction = direction
            self.bytes = bytes
        }
    }

    public struct Session: Equatable, Sendable {
        public var id: Int
        public var attributes: [String: String]
        public var entries: [Entry]
        /// `ephemeral-private` → scalar; `kpersistent` pairs are kept apart.
        public var secrets: [String: [UInt8]]
        public var persistentKeys: [PersistentKey]

        public init(id: Int, attributes: [String: String] = [:]) {
            self.id = id
            self.attributes = attributes
            self.entries = []
            self.secrets = [:]
            self.persistentKeys = []
        }

        /// `5E` (NFC, socket) or `C3` (BLE).
        public var interfaceByte: UInt8 { attributes["interface"] == "ble" ? 0xC3 : 0x5E }
    }

    /// A cached FAST key: the credential's long-term public key and Kpersistent.
    public struct PersistentKey: Equatable, Sendable {
        public var credentialKey: [UInt8]
        public var key: [UInt8]
        public init(credentialKey: [UInt8], key: [UInt8]) {
            self.credentialKey = credentialKey
            self.key = key
        }
    }

    public var sessions: [Session] = []
    /// Reader group id → group public key.
    public var readerKeys: [[UInt8]: [UInt8]] = [:]

    public init() {}

    /// Limits on what a file may make the reader hold.
    public static let maxLines = 2_000_000
    public static let maxAPDUBytes = 65_546

    public init(parsing text: String) throws(TraceError) {
        var current: Int?
        var lineNumber = 0
        func session(_ id: Int) -> Int {
            if let i = sessions.firstIndex(where: { $0.id == id }) { return i }
            sessions.append(Session(id: id))
            return sessions.count - 1
        }
        // `@session` lines, once seen, alone say where sessions begin (a check may SELECT twice in one).
        var explicitSessions = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            guard lineNumber <= Self.maxLines else { throw TraceError("more than \(Self.maxLines) lines", line: lineNumber) }
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let words = code.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first else { continue }
            switch first {
            case "@session":
                explicitSessions = true
                guard words.count >= 2, let id = Int(words[1]), id >= 0 else { throw TraceError("@session needs a number", line: lineNumber) }
                var s = Session(id: id)
                for w in words.dropFirst(2) {
                    let kv = w.split(separator: "=", maxSplits: 1).map(String.init)
                    if kv.count == 2 { s.attributes[kv[0]] = kv[1] }
                }
                if let i = sessions.firstIndex(where: { $0.id == id }) { sessions[i].attributes.merge(s.attributes) { $1 } } else { sessions.append(s) }
                current = session(id)
            case "@secret":
                guard words.count >= 4, let id = Int(words[1]) else { throw TraceError("@secret SESSION NAME HEX…", line: lineNumber) }
                let i = session(id)
                if words[2] == "kpersistent" {
                    guard words.count >= 5, let cred = Hex.decode(words[3]), cred.count == 65, let k = Hex.decode(words[4]), k.count == 32 else {
                        throw TraceError("@secret N kpersistent CREDENTIAL-KEY(65 bytes) KEY(32 bytes)", line: lineNumber)
                    }
                    sessions[i].persistentKeys.append(PersistentKey(credentialKey: cred, key: k))
                } else {
                    guard let value = Hex.decode(words[3]), value.count <= 64 else { throw TraceError("@secret value is not hex (at most 64 bytes)", line: lineNumber) }
                    sessions[i].secrets[words[2]] = value
                }
            case "@reader-key":
                guard words.count >= 3, let g = Hex.decode(words[1]), g.count == 16, let k = Hex.decode(words[2]), k.count == 65 else {
                    throw TraceError("@reader-key GROUP-ID(16 bytes hex) PUBLIC-KEY(65 bytes hex)", line: lineNumber)
                }
                readerKeys[g] = k
            case ">", "<", "C", "R":
                let direction: Direction = (first == ">" || first == "C") ? .command : .response
                var hexWords = Array(words.dropFirst())
                if first == "C" || first == "R" {
                    // `C LABEL WORDS: hex` (lock transact) or `C LABEL hex` (docs/protocol.md vectors).
                    if let colon = code.firstIndex(of: ":") {
                        hexWords = code[code.index(after: colon)...].split(separator: " ").map(String.init)
                    } else {
                        hexWords = words.count > 2 ? [words.last!] : []
                    }
                }
                let hex = hexWords.joined()
                guard hex.count <= Self.maxAPDUBytes * 2 else { throw TraceError("APDU longer than \(Self.maxAPDUBytes) bytes", line: lineNumber) }
                guard let bytes = Hex.decode(hex), !bytes.isEmpty else {
                    if first == ">" || first == "<" { throw TraceError("\"\(hex.prefix(40))\" is not hex", line: lineNumber) }
                    continue  // a `C`/`R` word that was prose
                }
                if !explicitSessions, direction == .command, Self.startsTransaction(bytes), let c = current,
                   sessions[c].entries.contains(where: { $0.direction == .command && $0.bytes.count > 1 && $0.bytes[1] == 0x80 }) {
                    current = nil  // a new transaction without an @session line
                }
                if current == nil { current = session((sessions.map(\.id).max() ?? 0) + 1) }
                sessions[current!].entries.append(Entry(direction, bytes))
            default:
                continue  // decoded text, prose
            }
        }
    }

    /// SELECT of the access applet: where a transaction begins.
    static func startsTransaction(_ command: [UInt8]) -> Bool {
        command.count >= 14 && command[0] == 0x00 && command[1] == 0xA4 && Array(command[5..<14]) == AccessAID.expedited
    }

    /// The file form, with `decoded` lines (already indented) after each APDU when given.
    public func encoded(decoded: ((Session) -> [[String]])? = nil) -> String {
        var out = "# lockbench transcript v1 (docs/conformance.md); read it with `lockbench trace FILE`\n"
        for (group, key) in readerKeys.sorted(by: { $0.key.hex < $1.key.hex }) {
            out += "@reader-key \(group.hex) \(key.hex)\n"
        }
        for s in sessions {
            out += "@session \(s.id)" + s.attributes.sorted(by: { $0.key < $1.key }).map { " \($0.key)=\($0.value)" }.joined() + "\n"
            for (name, value) in s.secrets.sorted(by: { $0.key < $1.key }) { out += "@secret \(s.id) \(name) \(value.hex)\n" }
            for p in s.persistentKeys { out += "@secret \(s.id) kpersistent \(p.credentialKey.hex) \(p.key.hex)\n" }
            let notes = decoded?(s)
            for (i, e) in s.entries.enumerated() {
                out += "\(e.direction.rawValue) \(e.bytes.hex)\n"
                if let notes, i < notes.count { for n in notes[i] { out += "    \(n)\n" } }
            }
        }
        return out
    }
}

/// A transcript or capture that cannot be read: what and where.
public struct TraceError: Error, CustomStringConvertible, Equatable {
    public var reason: String
    public var line: Int?
    public init(_ reason: String, line: Int? = nil) {
        self.reason = reason
        self.line = line
    }
    public var description: String { (line.map { "line \($0): " } ?? "") + reason }
}

/// The access applet AIDs (kept here so the transcript reader needs no protocol state).
enum AccessAID {
    static let expedited: [UInt8] = [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01]
    static let stepUp: [UInt8] = [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x02]
}

/// Collects a transcript while checks run (thread-safe: a phone harness answers on transport
/// threads). Secrets are kept only when `recordSecrets` is on (`--transcript-secrets`).
public final class TranscriptRecorder: Sendable {
    private struct State {
        var transcript = Transcript()
        var current: Int?
    }
    private let state = Mutex(State())
    public let recordSecrets: Bool

    public init(recordSecrets: Bool) { self.recordSecrets = recordSecrets }

    /// Starts a session; later entries and secrets belong to it.
    public func begin(_ attributes: [String: String]) {
        state.withLock { held in
            let id = held.transcript.sessions.count + 1
            var s = Transcript.Session(id: id, attributes: attributes)
            s.attributes = attributes
            held.transcript.sessions.append(s)
            held.current = held.transcript.sessions.count - 1
        }
    }

    public func record(_ direction: Transcript.Direction, _ bytes: [UInt8]) {
        state.withLock { held in
            if held.current == nil {
                held.transcript.sessions.append(Transcript.Session(id: held.transcript.sessions.count + 1))
                held.current = held.transcript.sessions.count - 1
            }
            held.transcript.sessions[held.current!].entries.append(Transcript.Entry(direction, bytes))
        }
    }

    public func secret(_ name: String, _ value: [UInt8]) {
        guard recordSecrets else { return }
        state.withLock { held in
            guard let c = held.current else { return }
            held.transcript.sessions[c].secrets[name] = value
        }
    }

    public func persistentKey(credentialKey: [UInt8], key: [UInt8]) {
        guard recordSecrets else { return }
        state.withLock { held in
            guard let c = held.current else { return }
            let p = Transcript.PersistentKey(credentialKey: credentialKey, key: key)
            if !held.transcript.sessions[c].persistentKeys.contains(p) { held.transcript.sessions[c].persistentKeys.append(p) }
        }
    }

    /// A reader's group key is public: always recorded (the key schedule's salt needs it).
    public func readerKey(group: [UInt8], publicKey: [UInt8]) {
        state.withLock { held in held.transcript.readerKeys[group] = publicKey }
    }

    public var snapshot: Transcript { state.withLock { held in held.transcript } }
}

/// An `APDUTransceiver` that records every command and response.
public final class RecordingLink: APDUTransceiver {
    public let inner: APDUTransceiver
    public let recorder: TranscriptRecorder
    public init(_ inner: APDUTransceiver, recorder: TranscriptRecorder) {
        self.inner = inner
        self.recorder = recorder
    }
    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        recorder.record(.command, command)
        let response = try inner.transceive(command)
        recorder.record(.response, response)
        return response
    }
}
