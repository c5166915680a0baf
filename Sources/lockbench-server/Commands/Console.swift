import ArgumentParser
import BenchConsole
import CommandLineSupport
import Foundation
import HTTPServing
import LockRuntime

/// `lockbench console --lock unix:PATH`: a bench console in the browser for a running lock.
struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "A bench console in the browser: a running lock's decisions and radio events, live.",
        discussion: """
        Start the lock with --events, then the console, then open the URL it prints:

          lockbench lock run --config site/front-door.lock.json --nfc virtual --events unix:/tmp/front-door.events
          lockbench console --lock unix:/tmp/front-door.events --port 8480

        The page (plain HTML and a small script, nothing downloaded) shows the lock as it started, \
        each transaction as it is decided (time on the lock's clock, radio, GRANTED or DENIED, the \
        reason and its detail, the credential, FAST or standard and step-up, milliseconds) and the \
        radio events. A lock that restarts is followed again once its socket is back.

        With --conformance the page also follows conformance runs as they go (start the run \
        with `--events` on that path): each check as it ends with the official case it mirrors, \
        progress, and the counts.
        """)

    @Option(help: ArgumentHelp("The lock's event socket, as given to `lock run --events`.", valueName: "unix:path"))
    var lock: String
    @Option(help: ArgumentHelp("Also follow conformance runs published on this socket (`conformance … --events unix:PATH`): each check as it ends, the counts, one run after another.", valueName: "unix:path"))
    var conformance: String?
    @Option(help: ArgumentHelp("TCP port (0: any free port, printed).", valueName: "n"))
    var port: Int = 8480
    @Option(help: ArgumentHelp("Address to listen on. The page shows credentials: keep it on loopback unless the bench network is yours.", valueName: "host"))
    var host: String = "127.0.0.1"

    func validate() throws {
        guard EventSocket.path(of: lock) != nil else { throw ValidationError("--lock \(lock.prefix(80)): give unix:PATH, the path given to lock run --events") }
        if let conformance, EventSocket.path(of: conformance) == nil {
            throw ValidationError("--conformance \(conformance.prefix(80)): give unix:PATH, the path given to conformance --events")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
    }

    func run() async throws {
        let path = EventSocket.path(of: lock) ?? ""
        do {
            guard let (server, stopFeeds) = try await ConsoleServer.start(socketPath: path, conformancePath: conformance.flatMap(EventSocket.path(of:)),
                                                                          host: host, port: port, logger: serveLogger("lockbench.console")) else {
                throw UserError(message: "cannot listen on \(host):\(port)", code: ExitCodes.environment)
            }
            if !["127.0.0.1", "localhost", "::1"].contains(host) {
                emitError("warning: the console listens on \(host) without TLS or a login; it shows credentials and decisions to anyone who can reach it")
            }
            try await serveUntilSignal("console", host: host, port: server.port) {
                stopFeeds()
                await server.stop()
            }
        } catch let e as HTTPServingError {
            throw UserError(message: e.description, code: e.environment ? ExitCodes.environment : ExitCodes.usage)
        }
    }
}
