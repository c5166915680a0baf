import TrustModel
import TrustCore
import HTTPServing
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// The trust service on HTTP: Hummingbird in a swift-service-lifecycle group, started in the
/// background (scenarios, tests, benchmarks) or run until a signal (`trust serve`). Every ten
/// minutes it deletes the approval requests settled longer than `ApprovalRules.retention` ago, so
/// a quiet site is purged too (a busy one purges in every approval write).
public final class TrustServer: Sendable {
    private let server: BackgroundHTTPServer
    public var port: Int { server.port }

    /// Starts listening on `host:port` (0: a free port) and returns once it accepts connections.
    /// With `tls`, HTTPS. `metricsToken`: `/metrics` answers only `Authorization: Bearer TOKEN`
    /// (otherwise it answers anyone, and the caller decides whether that is wise: see `trust serve`).
    public static func start(service: TrustService, host: String = "127.0.0.1", port: Int = 0,
                             registry: PrometheusCollectorRegistry? = nil, metricsToken: String? = nil,
                             pushTokens: PushTokenRegistration? = nil, tls: TLSFiles? = nil, idleTimeout: TimeAmount = .seconds(30),
                             logger: Logger? = nil) async throws -> TrustServer {
        guard let server = try await BackgroundHTTPServer.start(
            router: TrustAPI.router(service: service, registry: registry, metricsToken: metricsToken, pushTokens: pushTokens),
            host: host, port: port,
            serverName: "lockbench-trust", logger: BackgroundHTTPServer.logger(logger, label: "lockbench.trust"),
            every: 600, tick: { _ = try? await service.purgeApprovals() }, tls: try tls?.configuration(), idleTimeout: idleTimeout) else {
            throw TrustError(.invalidRequest, "the trust service could not listen on \(host):\(port)")
        }
        return TrustServer(server: server)
    }

    private init(server: BackgroundHTTPServer) { self.server = server }

    public var baseURL: String { server.baseURL }

    public func stop() async { await server.stop() }
}
