import Foundation
import Synchronization
import TrustModel

/// Runs concurrent requests of one kind together: while one batch is being handled, the requests
/// that arrive wait and then go as the next batch, handled by one call of `handle` (one write
/// transaction with a few set-based statements for all of them, instead of a few statements each).
/// On the one serialized write path, statements are the cost; under load a batch of fifty costs
/// about what one did. A lone request goes at once, as a batch of one.
final class Coalescer<Request: Sendable, Response: Sendable>: Sendable {
    typealias Handler = @Sendable ([Request]) async throws -> [Result<Response, Error>]
    private let handle: Handler
    private let maxBatch: Int
    private struct Queue {
        var waiting: [(Request, CheckedContinuation<Response, Error>)] = []
        var running = false
    }
    private let queue = Mutex(Queue())

    init(maxBatch: Int = 256, _ handle: @escaping Handler) {
        self.maxBatch = maxBatch
        self.handle = handle
    }

    func submit(_ request: Request) async throws -> Response {
        try await withCheckedThrowingContinuation { c in
            let lead = queue.withLock { q in
                q.waiting.append((request, c))
                defer { q.running = true }
                return !q.running
            }
            if lead { Task { await self.drain() } }
        }
    }

    private func drain() async {
        while true {
            let batch: [(Request, CheckedContinuation<Response, Error>)] = queue.withLock { q in
                if q.waiting.isEmpty { q.running = false; return [] }
                let b = Array(q.waiting.prefix(maxBatch))
                q.waiting.removeFirst(b.count)
                return b
            }
            if batch.isEmpty { return }
            do {
                let results = try await handle(batch.map(\.0))
                for (i, (_, c)) in batch.enumerated() {
                    c.resume(with: i < results.count ? results[i] : .failure(TrustStorageError("no answer for a coalesced request")))
                }
            } catch {
                for (_, c) in batch { c.resume(throwing: error) }
            }
        }
    }
}
