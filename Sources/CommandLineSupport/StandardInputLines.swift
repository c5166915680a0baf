import Foundation

/// The lines typed on stdin, as an async sequence for an async command's console. `readLine`
/// blocks, so it runs on a thread of its own, never on a thread of the cooperative pool; the
/// sequence ends at end of file. At most `backlog` lines wait unread (a console reads one command
/// at a time; a pasted flood beyond that is dropped, not buffered without bound).
public func standardInputLines(backlog: Int = 4096) -> AsyncStream<String> {
    let (lines, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(backlog))
    let reader = Thread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    reader.name = "stdin"
    reader.start()
    return lines
}

/// Runs a call that blocks (a radio's C calls) on a thread of its own and awaits its answer, so
/// an async command never blocks a thread of the cooperative pool.
public func onOwnThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
        let thread = Thread { c.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}
