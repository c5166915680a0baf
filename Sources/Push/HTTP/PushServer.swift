import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// The relay on HTTP (`lockbench push serve`), started in the background or run until a signal;
/// a ticker hands over delayed and stored messages and expires wake-up subscriptions.
public final class PushServer: Sendable {
    public let port: Int
    public let relay: PushRelay
    public let wakeUp: WakeUpService
    public let inboxes: PushInboxes
    private let group: ServiceGroup
    private let task: Task<Void, Error>
    private let ticker: Task<Void, Never>

    public static func start(relay: PushRelay, wakeUp: WakeUpService, host: String = "127.0.0.1", port: Int = 0,
                             logger: Logger? = nil) async throws -> PushServer {
        var log = logger ?? Logger(label: "lockbench.push")
        if logger == nil { log.logLevel = .warning }
        let inboxes = PushInboxes(relay: relay)
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: PushAPI.router(relay: relay, wakeUp: wakeUp, inboxes: inboxes),
                              configuration: .init(address: .hostname(host, port: port), serverName: "lockbench-push"),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0); continuation.finish() },
                              logger: log)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: log))
        let task = Task { try await group.run() }
        var bound: Int?
        for await p in stream { bound = p }
        guard let bound, bound > 0 else {
            task.cancel()
            _ = try? await task.value
            throw PushRefusal.invalidArgument("the push relay could not listen on \(host):\(port)")
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 100_000_000)
                await relay.deliverDue()
                await wakeUp.expire()
            }
        }
        return PushServer(port: bound, relay: relay, wakeUp: wakeUp, inboxes: inboxes, group: group, task: task, ticker: ticker)
    }

    private init(port: Int, relay: PushRelay, wakeUp: WakeUpService, inboxes: PushInboxes, group: ServiceGroup, task: Task<Void, Error>, ticker: Task<Void, Never>) {
        self.port = port; self.relay = relay; self.wakeUp = wakeUp; self.inboxes = inboxes; self.group = group; self.task = task; self.ticker = ticker
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func stop() async {
        ticker.cancel()
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
