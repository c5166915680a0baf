import Foundation
import TrustModel
import Logging
import SQLiteNIO
import Synchronization

/// The change feed of a SQLite store (`TrustChangeFeed`). Every announced change is rows of
/// `changes`, written in the change's own transaction — there once it commits, never if it rolls
/// back — by whichever process made it: the admin command line writes the same file as `trust
/// serve`. A follower reads the rows after the last one it saw every `interval`, on a read-only
/// connection and a thread of its own, and hands them to the subscribers. A push is a hint: 50 ms
/// is far below any phone's poll, and the table keeps only its newest `retained` rows.
final class SQLiteChangeFollower: Sendable {
    static let interval: TimeInterval = 0.05
    /// Rows the announcing transaction leaves in `changes` (older ones are deleted with it).
    static let retained = 10_000
    /// Rows read at once; a longer backlog is read in turn without waiting.
    static let batch = 512

    private let reader: SQLiteDirectReader
    private let feed = ChangeFanOut()
    private let logger: Logger
    private struct State {
        /// The newest row seen (read when the first subscriber starts the follower).
        var last: Int64 = 0
        var stopped = false
        var running = false
    }
    private let state = Mutex(State())
    /// Wakes the follower's thread from its wait between reads (`stop`).
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when the follower's thread has ended.
    private let done = DispatchSemaphore(value: 0)

    init(path: String, logger: Logger) throws {
        reader = try SQLiteDirectReader(path: path)
        self.logger = logger
    }

    /// Every change committed from now on, by any process. The first subscriber starts the
    /// follower from the newest row there is.
    func subscribe() -> AsyncStream<TrustChange> {
        let stream = feed.subscribe()
        let start = state.withLock { s -> Bool in
            guard !s.running, !s.stopped else { return false }
            s.running = true
            return true
        }
        guard start else { return stream }
        var newest: Int64 = 0
        do {
            newest = try reader.lock.withLock { try reader.rows("SELECT coalesce(max(seq), 0) AS seq FROM changes", []) }
                .first?.column("seq")?.integer.map(Int64.init) ?? 0
        } catch {
            logger.warning("trust change feed: \(error); following from the start of the table")
        }
        state.withLock { $0.last = newest }
        let thread = Thread { [self] in
            run()
            done.signal()
        }
        thread.name = "trust-sqlite-changes"
        thread.start()
        return stream
    }

    private func run() {
        var backlog = false
        while true {
            if !backlog && !state.withLock({ $0.stopped }) { _ = wake.wait(timeout: .now() + Self.interval) }
            let (stop, from) = state.withLock { ($0.stopped, $0.last) }
            if stop { return }
            do {
                let rows = try reader.lock.withLock {
                    try reader.rows("SELECT seq, payload FROM changes WHERE seq > ? ORDER BY seq LIMIT \(Self.batch)", [.integer(Int(from))])
                }
                var newest = from
                for row in rows {
                    guard let seq = row.column("seq")?.integer else { continue }
                    newest = max(newest, Int64(seq))
                    if let payload = row.column("payload")?.string, let change = ChangePayload.decode(payload) { feed.publish(change) }
                }
                backlog = rows.count == Self.batch
                state.withLock { $0.last = newest }
            } catch {
                logger.warning("trust change feed: \(error); reading again in 1 s")
                backlog = false
                if !state.withLock({ $0.stopped }) { _ = wake.wait(timeout: .now() + 1) }
            }
        }
    }

    /// Ends every subscriber's stream and the follower's thread; idempotent.
    func stop() {
        let wasRunning = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return s.running && !s.stopped
        }
        wake.signal()
        if wasRunning { done.wait() }
        feed.finish()
        reader.close()
    }
}
