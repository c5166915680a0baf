import Foundation
import LockRuntime
import Logging

/// Runs async work from a synchronous command and waits for it (the root command stays
/// synchronous; the trust, phone and scenario commands are async inside).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}

/// The rest of a `serve` command once its server listens (`trust serve`, `push serve`): prints
/// "NAME listening on http://HOST:PORT" (what scripts and tests wait for), waits for SIGINT or
/// SIGTERM, stops the server gracefully and prints "stopped".
func serveUntilSignal(_ name: String, host: String, port: Int, stop: () async throws -> Void) async throws {
    emitLine("\(name) listening on http://\(host):\(port)")
    let signalled = DispatchSemaphore(value: 0)
    let signals = StopSignals { _ in signalled.signal() }
    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async { signalled.wait(); c.resume() }
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
