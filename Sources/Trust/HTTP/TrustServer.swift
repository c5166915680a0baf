import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The trust service on HTTP: Hummingbird in a swift-service-lifecycle group, started in the
/// background (scenarios, tests, benchmarks) or run until a signal (`trust serve`).
public final class TrustServer: Sendable {
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, Error>

    /// Starts listening on `host:port` (0: a free port) and returns once it accepts connections.
    public static func start(service: TrustService, host: String = "127.0.0.1", port: Int = 0,
                             registry: PrometheusCollectorRegistry? = nil, logger: Logger? = nil) async throws -> TrustServer {
        var log = logger ?? Logger(label: "lockbench.trust")
        if logger == nil { log.logLevel = .warning }
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: TrustAPI.router(service: service, registry: registry),
                              configuration: .init(address: .hostname(host, port: port), serverName: "lockbench-trust"),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0); continuation.finish() },
                              logger: log)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: log))
        let task = Task { try await group.run() }
        var bound: Int?
        for await p in stream { bound = p }
        guard let bound, bound > 0 else {
            task.cancel()
            _ = try? await task.value
            throw TrustError(.invalidRequest, "the trust service could not listen on \(host):\(port)")
        }
        return TrustServer(port: bound, group: group, task: task)
    }

    private init(port: Int, group: ServiceGroup, task: Task<Void, Error>) {
        self.port = port; self.group = group; self.task = task
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
