import Foundation
import TrustModel

/// A FIFO mutex for async code: one SQLite connection carries one transaction at a time, and an
/// actor alone does not hold its lock across `await`.
final class AsyncMutex: @unchecked Sendable {
    private let lock = NSLock()
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        let free = lock.withLock { () -> Bool in
            if locked { return false }
            locked = true
            return true
        }
        if free { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if !locked { locked = true; return true }
                waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    func release() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty { locked = false; return nil }
            return waiters.removeFirst()
        }
        next?.resume()
    }

    func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }
}
