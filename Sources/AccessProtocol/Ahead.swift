import Dispatch

/// Work a session starts before it sends a command and needs only once the answer is in: it runs
/// on another thread while the link waits for the other side (the reader's ECDH and key
/// derivation while the credential checks AUTH1 and signs). `value` waits for it if need be.
final class Ahead<T>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: T?

    init(_ work: @escaping @Sendable () -> T) {
        DispatchQueue.global(qos: .userInitiated).async {
            self.result = work()
            self.done.signal()
        }
    }

    var value: T {
        done.wait()
        defer { done.signal() }   // for the next reader of `value`
        return result!
    }
}
