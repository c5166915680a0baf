import ByteCore
import Foundation
import ReaderSeam
import Synchronization

/// The socket transport as the lock's `CardReader`: a credential listening on HOST:PORT is "in
/// the field" when the lock can connect to it. One connection is one tap: the lock connects,
/// runs the transaction, closes (the credential sees end of stream), and connects again no
/// sooner than `rearmDelay` later — a credential that keeps listening is a phone held to the door.
public final class SocketReader: CardReader, Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        public var framing: SocketFraming
        /// Milliseconds to wait for each response.
        public var timeoutMilliseconds: Int32
        /// Seconds between the end of one tap and the next connection.
        public var rearmDelay: TimeInterval

        public init(host: String, port: UInt16, framing: SocketFraming = .raw, timeoutMilliseconds: Int32 = 5000,
                    rearmDelay: TimeInterval = 1) {
            self.host = host
            self.port = port
            self.framing = framing
            self.timeoutMilliseconds = timeoutMilliseconds
            self.rearmDelay = rearmDelay
        }
    }

    /// A connected credential.
    public struct Card: PresentedCard {
        public let transceiver: SocketTransceiver
        public let address: String
        public var link: APDUTransceiver { transceiver }
        public var identity: String { address }
        public var description: String { "credential at \(address) (\(transceiver.framing.rawValue) framing)" }
    }

    public let configuration: Configuration
    /// When the last card's transaction finished (`finish`).
    private let finishedAt = Mutex<Date?>(nil)
    private let notice = Mutex<(@Sendable (String, Bool) -> Void)?>(nil)
    public var onNotice: (@Sendable (String, Bool) -> Void)? {
        get { notice.withLock { $0 } }
        set { notice.withLock { $0 = newValue } }
    }

    public init(configuration: Configuration) { self.configuration = configuration }

    public var spec: String { "tcp:\(configuration.host):\(configuration.port)" }

    public var startNote: String { "connecting to a credential on TCP (\(configuration.framing.rawValue) framing)" }

    /// Nothing to open: the reader is the lock's own TCP stack.
    public func open() throws -> String { "socket transport" }

    public func close() {}

    /// One connection attempt; a refused one waits out `timeout` (nothing comes sooner).
    public func waitForCard(timeout: TimeInterval) throws -> Card? {
        let c = configuration
        do {
            let link = try SocketTransceiver(host: c.host, port: c.port, framing: c.framing, timeoutMilliseconds: c.timeoutMilliseconds)
            return Card(transceiver: link, address: "\(c.host):\(c.port)")
        } catch {
            Thread.sleep(forTimeInterval: max(0, min(timeout, 0.25)))
            return nil
        }
    }

    public func finish(_ card: Card, granted: Bool?) {
        card.transceiver.close()
        finishedAt.withLock { $0 = Date() }
    }

    /// The connection is closed at `finish`; the credential counts as gone once `rearmDelay` passed.
    public func waitForRemoval(_ card: Card, timeout: TimeInterval) throws -> Bool {
        card.transceiver.close()
        let left = (finishedAt.withLock { $0 } ?? .distantPast).addingTimeInterval(configuration.rearmDelay).timeIntervalSinceNow
        if left <= 0 { return true }
        Thread.sleep(forTimeInterval: min(left, timeout))
        return left <= timeout
    }
}
