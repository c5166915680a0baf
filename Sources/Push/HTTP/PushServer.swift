import Crypto
import Foundation
import Logging
import HTTPServing

/// The relay on HTTP (`lockbench push serve`), started in the background or run until a signal;
/// every 100 ms it hands over delayed and stored messages and expires wake-up subscriptions.
public final class PushServer: Sendable {
    public let relay: PushRelay
    public let wakeUp: WakeUpService
    public let inboxes: PushInboxes
    private let server: BackgroundHTTPServer
    public var port: Int { server.port }

    public static func start(relay: PushRelay, wakeUp: WakeUpService, host: String = "127.0.0.1", port: Int = 0,
                             tls: TLSFiles? = nil, providerKey: P256.Signing.PublicKey? = nil,
                             inboxes: PushInboxes? = nil, logger: Logger? = nil) async throws -> PushServer {
        let inboxes = inboxes ?? PushInboxes(relay: relay)
        guard let server = try await BackgroundHTTPServer.start(
            router: PushAPI.router(relay: relay, wakeUp: wakeUp, inboxes: inboxes, providerKey: providerKey), host: host, port: port,
            serverName: "lockbench-push", logger: BackgroundHTTPServer.logger(logger, label: "lockbench.push"),
            every: 0.1, tick: { await relay.deliverDue(); await wakeUp.expire() }, tls: try tls?.configuration()) else {
            throw PushRefusal.invalidArgument("the push relay could not listen on \(host):\(port)")
        }
        return PushServer(server: server, relay: relay, wakeUp: wakeUp, inboxes: inboxes)
    }

    private init(server: BackgroundHTTPServer, relay: PushRelay, wakeUp: WakeUpService, inboxes: PushInboxes) {
        self.server = server; self.relay = relay; self.wakeUp = wakeUp; self.inboxes = inboxes
    }

    public var baseURL: String { server.baseURL }

    public func stop() async { await server.stop() }
}
