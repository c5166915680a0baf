import Foundation

/// A FIFO mutex for async code: one SQLite connection can carry only one transaction at a time,
/// and an actor alone does not hold its lock across `await`.
final class AsyncMutex: @unchecked Sendable {
    private let lock = NSLock()
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        lock.lock()
        if !locked { locked = true; lock.unlock(); return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            waiters.append(c)
            lock.unlock()
        }
    }

    func release() {
        lock.lock()
        if waiters.isEmpty { locked = false; lock.unlock(); return }
        let next = waiters.removeFirst()
        lock.unlock()
        next.resume()
    }

    func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }
}
