import Foundation
import HTTPServing
import Hummingbird
import Logging
import NIOCore

/// `lockbench console`: the page at `/`, the lock's events as server-sent events at `/events`
/// (the `started` line and recent events first, then each as it comes), `/healthz`.
public enum ConsoleServer {
    public static func router(feed: LockEventFeed) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: ConsolePage.html)))
        }
        router.get("/healthz") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: feed.isConnected ? #"{"lock":"connected"}"# : #"{"lock":"waiting"}"#)))
        }
        router.get("/events") { _, _ in
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
        return router
    }

    /// Serves the console for the lock whose events are at `socketPath`.
    public static func start(socketPath: String, host: String, port: Int, logger: Logger) async throws(HTTPServingError) -> (BackgroundHTTPServer, LockEventFeed)? {
        let feed = LockEventFeed(path: socketPath)
        // A page keeps its event stream open for as long as it is shown.
        guard let server = try await BackgroundHTTPServer.start(router: router(feed: feed), host: host, port: port, serverName: "lockbench-console",
                                                               logger: logger, idleTimeout: .hours(12)) else {
            feed.stop()
            return nil
        }
        return (server, feed)
    }
}
