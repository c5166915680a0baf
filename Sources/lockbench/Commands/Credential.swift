import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import PCSC
import PhoneRadios
import PhoneSeam
import SocketTransport

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
        The credential listens; a lock connects (`lockbench lock transact --connect HOST:PORT`), runs \
        one transaction and closes. Framing is raw by default, as public Aliro test tools use:
        one write carries one whole APDU. `--framing length` prefixes each APDU with its 2-byte \
        big-endian length; both ends must agree.

          lockbench credential serve --key alice.key.pem \\
              --documents alice.cbor revoked.cbor \\
              --trust-reader door.reader.json --port 5000 --once

        Prints `listening on HOST:PORT` when ready, then one line per transaction (JSON with --json).

        With --vpicc HOST:PORT the credential is a card in a PC/SC reader instead: it connects to the \
        virtual reader driver vpcd inside pcscd (package vsmartcard-vpcd; port 35963 is "Virtual PCD 00 \
        00", 35964 "Virtual PCD 00 01"), which puts the card on that reader with a contactless ATR (3B \
        80 80 01 01). After each transaction (EXCHANGE or CONTROL FLOW answered) the card is pulled, and \
        put back a second later unless --once is given. Then, for example, `lockbench lock run --config \
        door.lock.json --nfc "pcsc:Virtual PCD 00 00"` taps it (docs/pcsc.md).

        Faults make it misbehave on purpose, to test a lock's denials: \
        \(CredentialFaults.names.map(\.0).joined(separator: ", ")).
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
    @Option(help: ArgumentHelp("Be a card in pcscd's virtual reader: connect to vpcd at this address instead of listening.", valueName: "host:port"))
    var vpicc: String?
    @Option(help: ArgumentHelp("With --vpicc: seconds a tap may last before the card is pulled.", valueName: "seconds"))
    var tapTimeout: Double = 30

    func validate() throws {
        guard SocketFraming(rawValue: framing) != nil else { throw ValidationError("--framing must be raw or length") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        if let vpicc { _ = try SocketCLI.address(vpicc, flag: "--vpicc") }
        guard tapTimeout.isFinite, tapTimeout > 0, tapTimeout <= 3600 else { throw ValidationError("--tap-timeout must be between 0 and 3600 seconds") }
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
        if let vpicc {
            let (host, port) = try SocketCLI.address(vpicc, flag: "--vpicc")
            return try serveAsCard(credential, radio: try PhoneRadioSpec.vpicc(host: host, port: port).radio())
        }
        let radio: any PhoneRadio
        var options = PhoneRadioSpec.Options()
        options.framing = SocketFraming(rawValue: framing)!
        do { radio = try PhoneRadioSpec.socket(host: host, port: UInt16(port)).radio(options) } catch {
            throw UserError(message: "cannot listen on \(host):\(port): \((error as? SocketError)?.reason ?? "\(error)")", code: ExitCodes.environment)
        }
        defer { radio.close() }
        emitLine(json ? KeyFiles.compactJSON(["event": "listening", "address": radio.address])
                      : "listening on \(radio.address)")
        repeat {
            let before = credential.transactions
            let tap: PhoneTap
            do { tap = try radio.present(credential, timeout: .infinity) } catch {
                throw UserError(message: "socket: \((error as? SocketError)?.reason ?? "\(error)")", code: ExitCodes.environment)
            }
            guard tap.ended else { continue }
            let count = tap.commands
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
    }

    /// `--vpicc`: the credential as a card in vpcd's reader, one tap per insertion.
    private func serveAsCard(_ credential: CredentialSession, radio: any PhoneRadio) throws {
        repeat {
            let tap: PhoneTap
            do {
                tap = try radio.present(credential, timeout: tapTimeout) {
                    emitLine(json ? KeyFiles.compactJSON(["event": "inserted", "address": radio.address])
                                  : "card inserted in vpcd at \(radio.address)")
                }
            } catch {
                throw UserError(message: "cannot reach vpcd at \(radio.address): \((error as? SocketError)?.reason ?? "\(error)"). Is pcscd running with the virtual reader "
                                + "driver (package vsmartcard-vpcd)? `lockbench pcsc list` should show \"Virtual PCD 00 00\".",
                                code: ExitCodes.environment)
            }
            let ended = tap.ended
            let served = Served(commands: tap.commands,
                                readerStatus: ended ? credential.lastReaderStatus.map { String(format: "%04X", $0) } : nil,
                                controlFlow: ended ? credential.lastControlFlow.map { Hex.encode($0.encoded()) } : nil)
            if json {
                emitLine(KeyFiles.compactJSON(served))
            } else {
                emitLine((ended ? "transaction" : "no complete transaction within \(tapTimeout) s") + ": \(served.commands) command(s)"
                         + (served.readerStatus.map { ", reader status \($0)" } ?? "")
                         + (served.controlFlow.map { ", control flow \($0)" } ?? "") + "; card pulled")
            }
            if !once { Thread.sleep(forTimeInterval: 1) }
        } while !once
    }
}
