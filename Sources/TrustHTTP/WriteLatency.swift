import Hummingbird
import Metrics

/// `lockbench_trust_write_seconds`: how long each request that may write (every method but GET
/// and HEAD) takes to answer, durable commit included — the latency operators page on.
struct WriteLatency<Context: RequestContext>: RouterMiddleware {
    let timer = Metrics.Timer(label: "lockbench_trust_write_seconds")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        let start = ContinuousClock.now
        defer {
            let d = ContinuousClock.now - start
            timer.recordNanoseconds(d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000)
        }
        return try await next(request, context)
    }
}
