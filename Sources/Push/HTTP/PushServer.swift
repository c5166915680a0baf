import Foundation
import Logging
import Trust

/// The relay on HTTP (`lockbench push serve`), started in the background or run until a signal;
/// a ticker hands over delayed and stored messages and expires wake-up subscriptions.
public final class PushServer: Sendable {
    public let relay: PushRelay
    public let wakeUp: WakeUpService
    public let inboxes: PushInboxes
    private let server: BackgroundHTTPServer
    private let ticker: Task<Void, Never>
    public var port: Int { server.port }

    public static func start(relay: PushRelay, wakeUp: WakeUpService, host: String = "127.0.0.1", port: Int = 0,
                             logger: Logger? = nil) async throws -> PushServer {
        let inboxes = PushInboxes(relay: relay)
        guard let server = await BackgroundHTTPServer.start(
            router: PushAPI.router(relay: relay, wakeUp: wakeUp, inboxes: inboxes), host: host, port: port,
            serverName: "lockbench-push", logger: BackgroundHTTPServer.logger(logger, label: "lockbench.push")) else {
            throw PushRefusal.invalidArgument("the push relay could not listen on \(host):\(port)")
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 100_000_000)
                await relay.deliverDue()
                await wakeUp.expire()
            }
        }
        return PushServer(server: server, relay: relay, wakeUp: wakeUp, inboxes: inboxes, ticker: ticker)
    }

    private init(server: BackgroundHTTPServer, relay: PushRelay, wakeUp: WakeUpService, inboxes: PushInboxes, ticker: Task<Void, Never>) {
        self.server = server; self.relay = relay; self.wakeUp = wakeUp; self.inboxes = inboxes; self.ticker = ticker
    }

    public var baseURL: String { server.baseURL }

    public func stop() async {
        ticker.cancel()
        await server.stop()
    }
}
