/// An incremental decoder of frames from a byte stream (a pty, a socket, a UART): feed bytes as
/// they arrive — one at a time, in batches, split anywhere — and take whole frames out. `next()`
/// returns nil for "need more bytes" and throws only when the stream cannot be resynchronised.
/// H4 (BLE), the PN532 serial frames and the socket transport's APDU framing implement it.
public protocol FrameDecoder {
    associatedtype Frame
    associatedtype Failure: Error

    /// Appends received bytes.
    mutating func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8

    /// The next whole frame, or nil when more bytes are needed.
    mutating func next() throws(Failure) -> Frame?
}

extension FrameDecoder {
    /// Feeds `bytes` and returns every whole frame they complete, in order.
    public mutating func frames<S: Sequence>(after bytes: S) throws(Failure) -> [Frame] where S.Element == UInt8 {
        feed(bytes)
        var out: [Frame] = []
        while let frame = try next() { out.append(frame) }
        return out
    }
}

/// The bytes a `FrameDecoder` has received but not yet framed. Consuming is O(1); the consumed
/// prefix is dropped on a later append once it is at least half the storage, so a long stream
/// neither grows without bound nor copies on every frame.
public struct FrameBuffer: Sendable {
    private var storage: [UInt8] = []
    private var start = 0

    public init() {}

    /// Bytes not yet consumed.
    public var count: Int { storage.count - start }
    public var isEmpty: Bool { count == 0 }

    /// The `i`-th unconsumed byte (0 is the oldest); `i` < `count`.
    public subscript(i: Int) -> UInt8 { storage[start + i] }

    /// Unconsumed bytes `range` (relative to the oldest), copied.
    public func bytes(_ range: Range<Int>) -> [UInt8] { Array(storage[(start + range.lowerBound)..<(start + range.upperBound)]) }

    /// Every unconsumed byte, copied.
    public var all: [UInt8] { Array(storage[start...]) }

    public mutating func append<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        if start > 4096 && start * 2 > storage.count {
            storage.removeFirst(start)
            start = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Drops the oldest `n` bytes (`n` ≤ `count`).
    public mutating func consume(_ n: Int) {
        start += n
        if start == storage.count { storage.removeAll(keepingCapacity: true); start = 0 }
    }

    /// Removes and returns the oldest `n` bytes (`n` ≤ `count`).
    public mutating func take(_ n: Int) -> [UInt8] {
        defer { consume(n) }
        return bytes(0..<n)
    }
}
