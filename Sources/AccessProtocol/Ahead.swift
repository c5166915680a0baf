import ByteCore
import Dispatch

/// Work a session starts before it sends a command and needs only once the answer is in: it runs
/// on another thread while the link waits for the other side (the reader's ECDH and key
/// derivation while the credential checks AUTH1 and signs). `value` waits for it if need be.
final class Ahead<T: Sendable>: Sendable {
    private let result = Monitor<T?>(nil)

    init(_ work: @escaping @Sendable () -> T) {
        DispatchQueue.global(qos: .userInitiated).async { [result] in
            let value = work()
            result.withLock { $0 = value }
        }
    }

    var value: T {
        result.wait(until: nil, for: { $0.map { _ in true } ?? false }) { held, _ in held! }
    }
}
