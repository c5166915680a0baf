import ByteCore
import Foundation
import TrustModel
import Logging
import SQLiteNIO

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
        /// Set by the follower's thread as it ends.
        var finished = false
    }
    /// The follower's thread waits on it between reads, woken early by `stop`.
    private let state = Monitor(State())

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
            newest = try reader.rows("SELECT coalesce(max(seq), 0) AS seq FROM changes", [])
                .first?.column("seq")?.integer.map(Int64.init) ?? 0
        } catch {
            logger.warning("trust change feed: \(error); following from the start of the table")
        }
        state.withLock { $0.last = newest }
        let thread = Thread { [self] in
            run()
            state.withLock { $0.finished = true }
        }
        thread.name = "trust-sqlite-changes"
        thread.start()
        return stream
    }

    private func run() {
        var backlog = false
        while true {
            if !backlog { pause(Self.interval) }
            let (stop, from) = state.withLock { ($0.stopped, $0.last) }
            if stop { return }
            do {
                let rows = try reader.rows("SELECT seq, payload FROM changes WHERE seq > ? ORDER BY seq LIMIT \(Self.batch)", [.integer(Int(from))])
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
                pause(1)
            }
        }
    }

    /// Waits `seconds`, or less when `stop` is asked meanwhile.
    private func pause(_ seconds: TimeInterval) {
        state.wait(until: Date().addingTimeInterval(seconds), for: { $0.stopped }, then: { _, _ in })
    }

    /// Ends every subscriber's stream and the follower's thread; idempotent.
    func stop() {
        let wasRunning = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return s.running && !s.stopped
        }
        // The thread's waits are bounded (a read, then at most `interval` or 1 s): so is this one.
        if wasRunning { state.wait(until: nil, for: { $0.finished }, then: { _, _ in }) }
        feed.finish()
        reader.close()
    }
}
