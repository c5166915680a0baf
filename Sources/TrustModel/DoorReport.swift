import ByteCore
import Codecs
import Foundation

/// What a phone saw at a door, uploaded after the tap (issue 22 §3, as Tapkey's app uploads the
/// lock's log): which door (the reader identifier AUTH0 named, `GROUP:SUB` in hex), the decision
/// the lock sent back (EXCHANGE reader status: `0101` opened), when, and the revocation list the
/// phone carried. An Aliro lock tells a phone neither its list's serial nor its access log; what it
/// does tell is whether it wants the phone's list: it asks in step-up only when the phone's list is
/// newer than its own (docs/protocol.md §9), so a delivered list is the lock's serial from then on
/// (at least), and a list not asked for is one the lock already had or a newer one.
public struct DoorReport: Codable, Sendable, Equatable {
    public enum Decision: String, Codable, Sendable, CaseIterable {
        /// Reader status `0101`: the door opened.
        case granted
        /// Any other reader status with high byte `00` (a refusal), or a CONTROL FLOW failure.
        case denied
        /// No status seen (the tap broke off, or the lock reported only its bolt's state).
        case unknown
    }

    /// `GROUP:SUB`, 32 + 32 lowercase hex digits (the 32-byte reader identifier of AUTH0).
    public var door: String
    public var decision: Decision
    /// The EXCHANGE reader status, 4 hex digits, if the lock sent one.
    public var readerStatus: String?
    /// When the phone saw it (RFC 3339).
    public var at: String
    /// The serial of the revocation list the phone held at the tap.
    public var revocationSerial: UInt64?
    /// The lock asked for that list in step-up, and the phone sent it.
    public var revocationDelivered: Bool
    /// Filled by the service: who reported it and when it arrived.
    public var device: String?
    public var receivedAt: String?

    public init(door: String, decision: Decision, readerStatus: String?, at: Date, revocationSerial: UInt64?, revocationDelivered: Bool) {
        self.door = door; self.decision = decision; self.readerStatus = readerStatus; self.at = RFC3339.format(at)
        self.revocationSerial = revocationSerial; self.revocationDelivered = revocationDelivered
    }

    /// A door's id from AUTH0's reader identifier (group ‖ sub, 16 bytes each).
    public static func doorID(readerID: [UInt8]) -> String? {
        guard readerID.count == 32 else { return nil }
        return Hex.encode(Array(readerID.prefix(16))).lowercased() + ":" + Hex.encode(Array(readerID.suffix(16))).lowercased()
    }

    /// The decision a reader status means (docs/protocol.md §10: `0101` after a grant; high byte
    /// `00` a refusal; `01xx` otherwise the bolt's state, which says nothing about this phone).
    public static func decision(readerStatus: UInt16?, failed: Bool) -> Decision {
        if readerStatus == 0x0101 { return .granted }
        if let s = readerStatus, s >> 8 == 0 { return .denied }
        return failed ? .denied : .unknown
    }

    /// Reads a phone's upload, refusing what a phone could not have seen; each refusal names the
    /// field and its rule. `device` and `receivedAt` are the service's, never the phone's.
    public init(parsing data: Data) throws(TrustError) {
        guard data.count <= 1024 else { throw TrustError(.invalidRequest, "a door report is at most 1024 bytes") }
        var r: DoorReport
        do { r = try JSONDecoder().decode(DoorReport.self, from: data) } catch {
            throw TrustError(.invalidRequest, "the body is not a door report {door, decision, at, revocationDelivered, readerStatus?, revocationSerial?}")
        }
        guard Self.isDoorID(r.door) else { throw TrustError(.invalidRequest, "door \"\(r.door.prefix(80))\" is GROUP:SUB, 32 + 32 lowercase hex digits") }
        if let s = r.readerStatus, s.utf8.count != 4 || Hex.decode(s) == nil {
            throw TrustError(.invalidRequest, "readerStatus \"\(s.prefix(16))\" is 4 hex digits (the EXCHANGE tag 97)")
        }
        guard RFC3339.parse(r.at) != nil else { throw TrustError(.invalidRequest, "at \"\(r.at.prefix(40))\" is not an RFC 3339 time") }
        if let s = r.revocationSerial, s > UInt64(Int64.max) { throw TrustError(.invalidRequest, "revocationSerial \(s) is above 2^63 - 1") }
        if r.revocationDelivered && r.revocationSerial == nil {
            throw TrustError(.invalidRequest, "revocationDelivered needs the revocationSerial that was delivered")
        }
        r.device = nil; r.receivedAt = nil
        self = r
    }

    public func encoded() -> String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

    public static func isDoorID(_ s: String) -> Bool {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { $0.utf8.count == 32 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
    }
}

/// What the service knows of a door from phones' reports: the newest revocation serial a phone
/// delivered there (so the lock holds it or a newer one), and the newest reports.
public struct DoorRecord: Codable, Sendable, Equatable {
    public var door: String
    /// The newest list a phone delivered at the lock's request (nil: none seen delivered).
    public var revocationSerial: UInt64?
    public var revocationReportedAt: String?
    public var revocationReportedBy: String?
    /// Reports received in all (the number of the next one).
    public var reportCount: Int64
    public var lastReportAt: String?
    /// The newest reports, oldest first (at most `DoorRecord.retainedReports`).
    public var reports: [DoorReport]

    public init(door: String) {
        self.door = door; reportCount = 0; reports = []
    }

    /// Reports kept per door; doors kept in all (a phone may report any door of a group it holds).
    public static let retainedReports = 32
    public static let maxDoors = 4096
}
