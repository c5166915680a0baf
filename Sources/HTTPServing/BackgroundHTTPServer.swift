import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOSSL
import Logging
import NIOCore
import ServiceLifecycle

/// A Hummingbird router served in the background in a swift-service-lifecycle group: started, its
/// bound port known once it accepts connections, housekeeping run on a timer beside it, stopped
/// gracefully. The trust service and the push relay both serve this way.
public struct BackgroundHTTPServer: Sendable {
    /// The port it listens on (the one the system chose when asked for 0).
    public let port: Int
    /// True when it serves HTTPS.
    public let secure: Bool
    private let group: ServiceGroup
    private let task: Task<Void, Error>
    private let ticker: Task<Void, Never>?

    /// Starts listening on `host:port` (0: a free port) and returns once it accepts connections;
    /// throws an environment `HTTPServingError` naming the port (and its holder when /proc tells)
    /// when it could not listen there, at once: the server's failure ends the wait. While it runs,
    /// `tick` is called every `interval` seconds. With `tls` it serves HTTPS. A connection that
    /// sends no complete request for `idleTimeout` is closed (a peer holding sockets open does not
    /// hold them for ever).
    public static func start<Context: RequestContext>(router: Router<Context>, host: String, port: Int, serverName: String,
                             logger: Logger, every interval: TimeInterval = 0,
                             tick: (@Sendable () async -> Void)? = nil, tls: TLSConfiguration? = nil,
                             idleTimeout: TimeAmount = .seconds(30)) async throws(HTTPServingError) -> BackgroundHTTPServer?
    where Context.Source == ApplicationRequestContextSource {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let http1 = HTTPServerBuilder.http1(configuration: .init(idleTimeout: idleTimeout))
        let server: HTTPServerBuilder
        if let tls {
            do { server = try .tls(http1, tlsConfiguration: tls) } catch { throw HTTPServingError("TLS: \(error)") }
        } else {
            server = http1
        }
        let app = Application(router: router, server: server,
                              configuration: .init(address: .hostname(host, port: port), serverName: serverName),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0); continuation.finish() },
                              logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        // However the group ends (a bind refused, a failure before it runs), the stream ends with
        // it, so the wait below cannot outlive the server.
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var bound: Int?
        for await p in stream { bound = p }
        guard let bound, bound > 0 else {
            task.cancel()
            var failure: (any Error)?
            do { try await task.value } catch { failure = error }
            if failure.map({ "\($0)".contains("in use") || "\($0)".contains("EADDRINUSE") }) ?? true {
                throw HTTPServingError(PortHolder.inUse(host: host, port: port), environment: true)
            }
            throw HTTPServingError("cannot listen on \(host):\(port): \(failure.map { "\($0)" } ?? "the server stopped")", environment: true)
        }
        let ticker = tick.map { tick in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: UInt64(max(interval, 0.001) * 1e9))
                    if Task.isCancelled { break }
                    await tick()
                }
            }
        }
        return BackgroundHTTPServer(port: bound, secure: tls != nil, group: group, task: task, ticker: ticker)
    }

    private init(port: Int, secure: Bool, group: ServiceGroup, task: Task<Void, Error>, ticker: Task<Void, Never>?) {
        self.port = port; self.secure = secure; self.group = group; self.task = task; self.ticker = ticker
    }

    public var baseURL: String { "\(secure ? "https" : "http")://127.0.0.1:\(port)" }

    /// Stops accepting, lets requests in flight finish, and returns when the server has stopped.
    public func stop() async {
        ticker?.cancel()
        await ticker?.value
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// `logger`, or a quiet one (warnings and worse) labelled `label` for servers started in-process.
    public static func logger(_ logger: Logger?, label: String) -> Logger {
        if let logger { return logger }
        var log = Logger(label: label)
        log.logLevel = .warning
        return log
    }
}
