import TrustModel
import TrustCore
import HTTPServing
import Foundation
import Hummingbird
import Logging
import Prometheus

/// The trust service on HTTP: Hummingbird in a swift-service-lifecycle group, started in the
/// background (scenarios, tests, benchmarks) or run until a signal (`trust serve`). Every ten
/// minutes it deletes the approval requests settled longer than `ApprovalRules.retention` ago, so
/// a quiet site is purged too (a busy one purges in every approval write).
public final class TrustServer: Sendable {
    private let server: BackgroundHTTPServer
    public var port: Int { server.port }

    /// Starts listening on `host:port` (0: a free port) and returns once it accepts connections.
    public static func start(service: TrustService, host: String = "127.0.0.1", port: Int = 0,
                             registry: PrometheusCollectorRegistry? = nil, pushTokens: PushTokenRegistration? = nil,
                             logger: Logger? = nil) async throws -> TrustServer {
        guard let server = await BackgroundHTTPServer.start(
            router: TrustAPI.router(service: service, registry: registry, pushTokens: pushTokens), host: host, port: port,
            serverName: "lockbench-trust", logger: BackgroundHTTPServer.logger(logger, label: "lockbench.trust"),
            every: 600, tick: { _ = try? await service.purgeApprovals() }) else {
            throw TrustError(.invalidRequest, "the trust service could not listen on \(host):\(port)")
        }
        return TrustServer(server: server)
    }

    private init(server: BackgroundHTTPServer) { self.server = server }

    public var baseURL: String { server.baseURL }

    public func stop() async { await server.stop() }
}
