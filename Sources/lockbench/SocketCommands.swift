import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock

/// `lockbench credential serve` and `lockbench lock transact`: a lock and a credential meeting
/// over the plain TCP socket transport (docs/protocol.md "Socket transport").
struct CredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Software credentials (phones) for the socket transport.",
        subcommands: [CredentialServe.self])
}

struct CredentialServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a software credential on TCP: it answers the lock's APDUs, one transaction per connection.",
        discussion: """
        The credential listens; a lock connects (`lockbench lock transact --connect HOST:PORT`),
        runs one transaction and closes. Framing is raw by default, as public Aliro test tools use:
        one write carries one whole APDU. `--framing length` prefixes each APDU with its 2-byte
        big-endian length; both ends must agree.

          lockbench credential serve --key alice.key.pem --documents alice.cbor revoked.cbor \\
              --trust-reader door.reader.json --port 5000 --once

        Prints `listening on HOST:PORT` when ready, then one line per transaction (JSON with --json).
        Faults make it misbehave on purpose, to test a lock's denials: \(CredentialFaults.names.map(\.0).joined(separator: ", ")).
        """)

    @OptionGroup var phone: PhoneOptions
    @Option(help: ArgumentHelp("Address to listen on (IPv4).", valueName: "host"))
    var host: String = "127.0.0.1"
    @Option(help: ArgumentHelp("TCP port (0 picks a free one and prints it).", valueName: "port"))
    var port: Int = Int(SocketCredentialServer.defaultPort)
    @Flag(help: "Serve one connection, then exit.")
    var once = false
    @Option(help: ArgumentHelp("APDU framing on the stream: raw or length.", valueName: "framing"))
    var framing: String = SocketFraming.raw.rawValue
    @Option(help: ArgumentHelp("Protocol versions offered in SELECT, most preferred first, e.g. 1.0,0.9.", valueName: "list"))
    var versions: String = "1.0"
    @Flag(help: "One JSON object per line.")
    var json = false

    func validate() throws {
        guard SocketFraming(rawValue: framing) != nil else { throw ValidationError("--framing must be raw or length") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard phone.isGiven else { throw ValidationError("--key: the credential's private key (PEM), from `lockbench key credential`") }
        _ = try SocketCLI.versions(versions, flag: "--versions")
    }

    struct Served: Encodable {
        var event = "transaction"
        var commands: Int
        var readerStatus: String?
        var controlFlow: String?
    }

    func run() throws {
        let credential = try phone.makeSession(interface: .nfc, versions: try SocketCLI.versions(versions, flag: "--versions"))!
        let server: SocketCredentialServer
        do {
            server = try SocketCredentialServer(host: host, port: UInt16(port), framing: SocketFraming(rawValue: framing)!)
        } catch {
            throw UserError(message: "cannot listen on \(host):\(port): \(error.reason)", code: ExitCodes.environment)
        }
        emitLine(json ? KeyFiles.compactJSON(["event": "listening", "address": "\(host):\(server.port)"])
                      : "listening on \(host):\(server.port)")
        repeat {
            let before = credential.transactions
            let count: Int
            do { count = try server.serveOne(credential) } catch {
                throw UserError(message: "socket: \(error.reason)", code: ExitCodes.environment)
            }
            let served = Served(commands: count,
                                readerStatus: credential.transactions > before ? credential.lastReaderStatus.map { String(format: "%04X", $0) } : nil,
                                controlFlow: credential.lastControlFlow.map { Hex.encode($0.encoded()) })
            if json {
                emitLine(KeyFiles.compactJSON(served))
            } else {
                emitLine("transaction: \(count) command(s)" + (served.readerStatus.map { ", reader status \($0)" } ?? "")
                         + (served.controlFlow.map { ", control flow \($0)" } ?? ""))
            }
        } while !once
        server.close()
    }
}

/// `lockbench lock transact`: one transaction of a configured lock against a credential on TCP.
struct LockTransact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transact",
        abstract: "Run one lock transaction against a credential listening on TCP and print the decision.",
        discussion: """
        Connects to HOST:PORT (a `lockbench credential serve`, or any credential speaking the socket
        transport of docs/protocol.md), runs SELECT, AUTH0, AUTH1 or FAST, step-up when the lock
        needs documents, and EXCHANGE or CONTROL FLOW, and decides exactly as `lock run` does: the
        lock's engine, clock, state, FAST cache and audit log are used and updated.

          lockbench lock transact --config door.lock.json --connect 127.0.0.1:5000 --json

        --at TIME first moves the lock's virtual clock to TIME (as `clock set --untrusted`).
        Exit status: 0 granted, 1 denied, 2 usage, 3 the credential could not be reached.
        """)

    @OptionGroup var config: LockConfigOption
    @Option(help: ArgumentHelp("The credential's address.", valueName: "host:port"))
    var connect: String = "127.0.0.1:\(SocketCredentialServer.defaultPort)"
    @Flag(help: "Print the outcome as JSON.")
    var json = false
    @Option(help: ArgumentHelp("Run at this time (ISO-8601): moves the lock's virtual clock there first.", valueName: "time"))
    var at: String?
    @Option(help: ArgumentHelp("APDU framing on the stream: raw or length.", valueName: "framing"))
    var framing: String = SocketFraming.raw.rawValue
    @Flag(inversion: .prefixedNo, help: "Ask for FAST (a cached Kpersistent) in AUTH0.")
    var fast = true
    @Option(help: ArgumentHelp("Milliseconds to wait for each response.", valueName: "ms"))
    var timeout: Int = 5000
    @Flag(help: "Include every APDU (hex) in the output.")
    var transcript = false

    func validate() throws {
        guard SocketFraming(rawValue: framing) != nil else { throw ValidationError("--framing must be raw or length") }
        _ = try SocketCLI.address(connect)
        if let at { guard RFC3339.parse(at) != nil else { throw ValidationError("--at \"\(at)\" is not an ISO-8601 time like 2026-03-02T09:00:00Z") } }
    }

    struct Output: Encodable {
        var decision: String
        var reason: String?
        var detail: String?
        var credential: String?
        var credentialKey: String?
        var transactionID: String
        var version: String?
        var fast: Bool
        var stepUp: Bool
        var acknowledged: Bool
        var lock: String
        var time: String
        var totalMs: Double
        var transportMs: Double
        var commands: Int
        /// The reader status the closing EXCHANGE carried, 4 hex digits.
        var readerStatus: String?
        var mailbox: MailboxRecord?
        var apdus: [String]?
    }

    func run() throws {
        let (host, port) = try SocketCLI.address(connect)
        let service = try openLockService(config.path)
        if let at {
            do { try service.lock.setClock(RFC3339.parse(at)!, trusted: false) } catch {
                throw UserError(message: error.description, code: ExitCodes.environment)
            }
        }
        // The reader offers what the lock's policy supports, newest first.
        service.reader.configuration.useFast = fast
        let link: SocketTransceiver
        do {
            link = try SocketTransceiver(host: host, port: port, framing: SocketFraming(rawValue: framing)!,
                                         timeoutMilliseconds: Int32(clamping: timeout))
        } catch {
            throw UserError(message: "cannot reach the credential at \(connect): \(error.reason)", code: ExitCodes.environment)
        }
        let outcome = service.transact(over: link, interface: .socket)
        service.flush()  // one transaction per process: write what the reader learnt now
        link.close()
        var out = Output(decision: outcome.granted ? "grant" : "deny", credential: outcome.credentialID,
                         credentialKey: outcome.credentialKey, transactionID: outcome.transactionID,
                         version: outcome.version.map(ProtocolVersionText.format), fast: outcome.fast, stepUp: outcome.stepUp,
                         acknowledged: outcome.acknowledged, lock: service.lock.boltName, time: RFC3339.format(outcome.at),
                         totalMs: (outcome.timings.total * 1e5).rounded() / 100,
                         transportMs: (outcome.timings.transport * 1e5).rounded() / 100, commands: outcome.timings.commands,
                         readerStatus: outcome.readerStatus.map { String(format: "%04X", $0) }, mailbox: outcome.mailbox,
                         apdus: transcript ? outcome.transcript.map { "\($0.direction.rawValue) \($0.label): \(Hex.encode($0.bytes))" } : nil)
        if case .deny(let reason, let detail) = outcome.decision {
            out.reason = reason.rawValue
            out.detail = detail
        }
        if json {
            print(KeyFiles.json(out))
        } else {
            let mode = outcome.fast ? "FAST" : outcome.stepUp ? "step-up" : "standard"
            if outcome.granted {
                print("grant \(out.credential ?? "") (\(mode), \(out.version ?? "?")) — lock \(out.lock), transaction \(out.transactionID)")
            } else {
                print("deny \(out.reason!): \(out.detail!)")
            }
            if let mailbox = outcome.mailbox { print("  \(mailbox.line)") }
            for line in out.apdus ?? [] { print("  \(line)") }
        }
        if !outcome.granted { throw ExitCode(ExitCodes.negative) }
    }
}

enum SocketCLI {
    /// `host:port` → parts.
    static func address(_ text: String) throws -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else {
            throw ValidationError("--connect \"\(text)\" is not HOST:PORT, e.g. 127.0.0.1:5000")
        }
        return (String(text[..<colon]), port)
    }

    /// `1.0,0.9` → [0x0100, 0x0009].
    static func versions(_ text: String, flag: String) throws -> [UInt16] {
        let list = text.split(separator: ",").map { ProtocolVersionText.parse(String($0).trimmingCharacters(in: .whitespaces)) }
        guard !list.isEmpty, list.allSatisfy({ $0 != nil }) else {
            throw ValidationError("\(flag) \"\(text)\" is not a list of versions like 1.0,0.9")
        }
        return list.map { $0! }
    }

}

extension KeyFiles {
    /// One-line JSON (for line-per-event output).
    static func compactJSON<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! e.encode(value), as: UTF8.self)
    }
}
