import Codecs
import Foundation
import OfflineUnlock
import TrustModel

/// Doors as phones report them (issue 22 §3, "which list does this door hold?"): after a tap a
/// phone uploads what it saw (`DoorReport`); the service keeps, per door, the newest revocation
/// serial a phone delivered there and the newest reports. Settings rows (both backends, no schema
/// change): `door/DOOR` (the `DoorRecord` without its reports) and `door-report/DOOR/SEQ`.
extension TrustService {
    static let doorPrefix = "door/"
    static func doorReportPrefix(_ door: String) -> String { "door-report/" + door + "/" }
    static func doorReportKey(_ door: String, _ seq: Int64) -> String {
        let digits = String(seq)
        return doorReportPrefix(door) + String(repeating: "0", count: max(0, 19 - digits.count)) + digits
    }

    /// Stores `report` from `device`. A phone reports only for a door it holds an active grant
    /// on (its user's grants covering the door) and only while its credential is active.
    @discardableResult
    public func reportDoor(device: String, _ report: DoorReport) async throws -> DoorRecord {
        guard DoorReport.isDoorID(report.door), let rule = try? ReaderRule(parsing: report.door) else {
            throw TrustError(.invalidRequest, "door \"\(report.door.prefix(80))\" is GROUP:SUB, 32 + 32 lowercase hex digits")
        }
        let now = now()
        return try await storage.write { tx in
            let d = try await Self.deviceHoldingKeys(device, tx: tx)
            guard try await Self.holdsActiveGrant(d.user, on: rule, tx: tx) else {
                throw TrustError(.forbidden, "\(d.user) holds no active grant on door \(report.door): a phone reports only doors it may open")
            }
            let record = try await tx.setting(Self.doorPrefix + report.door).flatMap { try? JSONDecoder().decode(DoorRecord.self, from: Data($0.utf8)) }
            if record == nil {
                // Bounded: a phone holding a group's grant could name every door of the group.
                let doors = try await tx.settings(prefix: Self.doorPrefix, limit: DoorRecord.maxDoors)
                guard doors.count < DoorRecord.maxDoors else {
                    throw TrustError(.tooManyPending, "the site already keeps \(DoorRecord.maxDoors) doors' reports")
                }
            }
            var door = record ?? DoorRecord(door: report.door)
            var stored = report
            stored.device = device
            stored.receivedAt = RFC3339.format(now)
            door.reportCount += 1
            door.lastReportAt = stored.receivedAt
            if report.revocationDelivered, let s = report.revocationSerial, s > (door.revocationSerial ?? 0) {
                door.revocationSerial = s
                door.revocationReportedAt = report.at
                door.revocationReportedBy = device
            }
            door.reports = []
            try await tx.setSetting(Self.doorPrefix + report.door, String(decoding: try JSONEncoder().encode(door), as: UTF8.self))
            try await tx.setSetting(Self.doorReportKey(report.door, door.reportCount), stored.encoded())
            let rows = try await tx.settings(prefix: Self.doorReportPrefix(report.door), limit: DoorRecord.retainedReports + 8)
            for row in rows.prefix(max(0, rows.count - DoorRecord.retainedReports)) { try await tx.deleteSetting(row.name) }
            return door
        }
    }

    /// A door as phones reported it, with its newest reports (oldest first).
    public func door(_ id: String) async throws -> DoorRecord {
        guard DoorReport.isDoorID(id) else { throw TrustError(.invalidRequest, "door \"\(id.prefix(80))\" is GROUP:SUB, 32 + 32 lowercase hex digits") }
        return try await storage.read { tx in
            guard var door = try await tx.setting(Self.doorPrefix + id).flatMap({ try? JSONDecoder().decode(DoorRecord.self, from: Data($0.utf8)) }) else {
                throw TrustError(.notFound, "no phone has reported door \(id)")
            }
            door.reports = try await tx.settings(prefix: Self.doorReportPrefix(id), limit: DoorRecord.retainedReports + 8)
                .compactMap { try? JSONDecoder().decode(DoorReport.self, from: Data($0.value.utf8)) }
            return door
        }
    }
}
