import Foundation
import LockRuntime
import Logging
import Synchronization

/// The rest of a `serve` command once its server listens (`trust serve`, `push serve`): prints
/// "NAME listening on http://HOST:PORT" (what scripts and tests wait for), waits for SIGINT or
/// SIGTERM, stops the server gracefully and prints "stopped".
func serveUntilSignal(_ name: String, host: String, port: Int, secure: Bool = false, stop: () async throws -> Void) async throws {
    emitLine("\(name) listening on \(secure ? "https" : "http")://\(host):\(port)")
    // The first SIGINT or SIGTERM resumes the command; a second one finds nothing to resume.
    let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    var signals: StopSignals?
    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
        waiting.withLock { $0 = c }
        signals = StopSignals { _ in waiting.withLock { $0.take() }?.resume() }
    }
    withExtendedLifetime(signals) {}
    try await stop()
    emitLine("stopped")
}

/// A serve command's logger: its label, notices and worse (requests are logged at info).
func serveLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .notice
    return logger
}
