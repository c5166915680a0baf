import ArgumentParser

/// The default port of a serve command (each service has its own, so two run side by side).
protocol ServePort { static var port: Int { get } }
enum TrustServePort: ServePort { static let port = 8480 }
enum PushServePort: ServePort { static let port = 8490 }

/// `--port` and `--host` of the serve commands (`trust serve`, `push serve`).
struct ListenOptions<Default: ServePort>: ParsableArguments {
    @Option(help: ArgumentHelp("TCP port (0: any free port, printed).", valueName: "n"))
    var port: Int = Default.port
    @Option(help: ArgumentHelp("Address to listen on.", valueName: "host"))
    var host: String = "127.0.0.1"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
    }
}
