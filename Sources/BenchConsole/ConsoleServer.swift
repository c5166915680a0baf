import Foundation
import HTTPServing
import Hummingbird
import Logging
import NIOCore

/// `lockbench console`: the page at `/`, the lock's events as server-sent events at `/events`
/// (the `started` line and recent events first, then each as it comes), `/healthz`.
public enum ConsoleServer {
    public static func router(feed: LockEventFeed, conformance: LockEventFeed? = nil) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: ConsolePage.html)))
        }
        router.get("/healthz") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: health(feed, conformance))))
        }
        router.get("/events") { _, _ in stream(feed) }
        if let conformance {
            router.get("/conformance/events") { _, _ in stream(conformance) }
        }
        return router
    }

    /// `{"lock":"connected"|"waiting"}`, with `"conformance"` when the console follows a run's socket.
    static func health(_ lock: LockEventFeed, _ conformance: LockEventFeed?) -> String {
        func state(_ f: LockEventFeed) -> String { f.isConnected ? "connected" : "waiting" }
        return #"{"lock":"\#(state(lock))""# + (conformance.map { #","conformance":"\#(state($0))""# } ?? "") + "}"
    }

    /// A feed as server-sent events: its start line and recent lines first, then each as it comes.
    static func stream(_ feed: LockEventFeed) -> Response {
        let events = feed.subscribe()
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                        body: ResponseBody { writer in
                            for await line in events {
                                // One event per line: a line holds no newline, so it is one `data:` field.
                                try await writer.write(ByteBuffer(string: "data: \(line)\n\n"))
                            }
                            try await writer.finish(nil)
                        })
    }

    /// Serves the console for the lock whose events are at `socketPath`, and for the conformance
    /// runs published at `conformancePath` when given. `stop` ends the feeds.
    public static func start(socketPath: String, conformancePath: String? = nil, host: String, port: Int,
                             logger: Logger) async throws(HTTPServingError) -> (server: BackgroundHTTPServer, stop: @Sendable () -> Void)? {
        let feed = LockEventFeed(path: socketPath)
        let conformance = conformancePath.map { LockEventFeed(path: $0, capacity: 1100, startKind: "conformance-started", publisher: "the conformance run") }
        let stop: @Sendable () -> Void = { feed.stop(); conformance?.stop() }
        // A page keeps its event stream open for as long as it is shown.
        guard let server = try await BackgroundHTTPServer.start(router: router(feed: feed, conformance: conformance), host: host, port: port,
                                                               serverName: "lockbench-console", logger: logger, idleTimeout: .hours(12)) else {
            stop()
            return nil
        }
        return (server, stop)
    }
}
