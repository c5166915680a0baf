import ByteCore
import Codecs
import Foundation
import LockBenchTestSupport
@testable import OfflineUnlock
import XCTest

/// Schedules as the official reader cases write them (`AliroSchedule`, `RecurrenceRule`) and
/// access rules naming allow / deny schedule ids: decoding (tolerant, bounded), evaluation, and
/// the engine's decision — beside LockBench's weekly windows, which keep working.
final class AliroScheduleTests: XCTestCase {
    var f = Fixture()
    let now = Fixture.t0
    var t: UInt32 { UInt32(now.timeIntervalSince1970) }

    func daily(from start: UInt32, _ seconds: UInt32, interval: UInt8 = 1, utc: Bool = true, end: UInt32 = 0) throws -> AliroSchedule {
        try AliroSchedule(flags: utc ? AliroSchedule.timeInUTC : 0, startTime: start, endTime: end,
                          rule: try RecurrenceRule(durationSeconds: seconds, pattern: .daily, interval: interval))
    }

    func decide(_ schedules: [AccessSchedule], allow: UInt8 = 0, deny: UInt8 = 0, capabilities: UInt32? = nil,
                policy: LockPolicy = LockPolicy()) throws -> Decision {
        var rule = try ReaderRule(groupID: f.reader.groupID)
        rule.allowScheduleIDs = allow
        rule.denyScheduleIDs = deny
        rule.capabilities = capabilities
        let data = try AccessData(id: [0xD5], readers: [rule], scheduleEntries: schedules)
        let doc = try AccessDocument.issue(access: data, credentialPublicKey: f.credentialKey,
                                           validity: .init(signed: now.addingTimeInterval(-60), validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(3600)),
                                           issuerKey: f.issuer)
        var state = EngineState(clock: TrustedClock(trustedAt: now))
        var core = f.core()
        core.policy = policy
        return core.decide(f.presentation(access: [doc.encoded()]), state: &state, at: now)
    }

    /// The three official cases, decided by the engine.
    func testTheCasesWindows() throws {
        XCTAssertTrue(try decide([.aliro(daily(from: t, 1800))], allow: 1).isGrant, "ACCESS_RULE_SCHEDULES: start now, 1800 s")
        let outside = try decide([.aliro(daily(from: t - 7200, 180))], allow: 1)
        XCTAssertEqual(outside.denyReason, .outsideSchedule, "NO_VALID_SCHEDULE_ALLOW_SCHEDULEID: \(outside)")
        if case .deny(_, let detail) = outside { XCTAssertTrue(detail.contains("outside its allow schedules 0"), detail) }
        let denied = try decide([.aliro(daily(from: t, 180))], deny: 1)
        XCTAssertEqual(denied.denyReason, .outsideSchedule, "VALID_SCHEDULE_DENY_SCHEDULEID: \(denied)")
        if case .deny(_, let detail) = denied { XCTAssertTrue(detail.contains("deny schedule 0"), detail) }
        // Outside the deny window: granted; a rule naming no ids ignores Aliro schedules.
        XCTAssertTrue(try decide([.aliro(daily(from: t - 7200, 180))], deny: 1).isGrant)
        XCTAssertTrue(try decide([.aliro(daily(from: t - 7200, 180))]).isGrant)
        // Allowed by 1, denied by 0: the deny wins.
        XCTAssertEqual(try decide([.aliro(daily(from: t, 180)), .aliro(daily(from: t, 1800))], allow: 2, deny: 1).denyReason, .outsideSchedule)
    }

    /// Capabilities (NFC_RDR_NEG_STEPUP_AD_NO_ACCESS_RULE_FOR_READER_ACTION): a rule naming some
    /// grants only those; the lock's action is an unsecure.
    func testCapabilities() throws {
        let none = try decide([], capabilities: 1 << 12)
        XCTAssertEqual(none.denyReason, .wrongReader, "\(none)")
        if case .deny(_, let detail) = none { XCTAssertTrue(detail.contains("capabilities 0x1000"), detail) }
        XCTAssertEqual(try decide([], capabilities: 1).denyReason, .wrongReader, "secure only")
        XCTAssertEqual(try decide([], capabilities: 1 << 5).denyReason, .wrongReader, "payment only")
        for bit in 1...4 { XCTAssertTrue(try decide([], capabilities: 1 << UInt32(bit)).isGrant, "bit \(bit)") }
        XCTAssertTrue(try decide([], capabilities: 0x3F).isGrant, "ALL_CAPABILITIES")
        XCTAssertTrue(try decide([]).isGrant, "absent: every action")
        var rule = try ReaderRule(groupID: f.reader.groupID)
        rule.capabilities = 1 << 12
        let data = try AccessData(id: [1], readers: [rule])
        XCTAssertEqual(try AccessData(cbor: data.cbor), data, "round trip")
        guard case .map(var dm) = data.cbor, case .array(var rules) = dm[.unsigned(2)]!, case .map(var rm) = rules[0] else { return XCTFail() }
        rm[.unsigned(4)] = .text("all")
        rules[0] = .map(rm)
        dm[.unsigned(2)] = .array(rules)
        XCTAssertThrowsError(try AccessData(cbor: .map(dm))) { e in XCTAssertTrue("\(e)".contains("capabilities (key 4)"), "\(e)") }
    }

    /// Weekly windows keep their meaning: document-wide unless a rule names them.
    func testWeeklyWindowsStillWork() throws {
        let weekend = try WeeklySchedule(parsing: "sat-sun 00:00-24:00")   // t0 is a Monday
        XCTAssertEqual(try decide([.weekly(weekend)]).denyReason, .outsideSchedule)
        XCTAssertTrue(try decide([.weekly(try WeeklySchedule(parsing: "daily 00:00-24:00"))]).isGrant)
        // Named as a deny schedule, the weekend window is no longer document-wide.
        XCTAssertTrue(try decide([.weekly(weekend)], deny: 1).isGrant)
        XCTAssertEqual(try decide([.weekly(try WeeklySchedule(parsing: "mon 00:00-24:00"))], deny: 1).denyReason, .outsideSchedule)
    }

    func testOccurrences() throws {
        let s = try daily(from: t - 86_400 * 3 - 100, 200)          // daily at t−100 each day
        XCTAssertTrue(s.contains(now, utcOffsetMinutes: 0))
        XCTAssertFalse(s.contains(now.addingTimeInterval(150), utcOffsetMinutes: 0))
        XCTAssertFalse(s.contains(now.addingTimeInterval(-86_400 * 4), utcOffsetMinutes: 0), "before the start")
        let everyOther = try daily(from: t - 86_400 - 100, 200, interval: 2)
        XCTAssertFalse(everyOther.contains(now, utcOffsetMinutes: 0), "interval 2: not today")
        XCTAssertTrue(everyOther.contains(now.addingTimeInterval(86_400), utcOffsetMinutes: 0))
        let ended = try daily(from: t - 86_400 - 100, 200, end: t - 1000)
        XCTAssertFalse(ended.contains(now, utcOffsetMinutes: 0), "no occurrence starts after the end")
        // Local time: the start is wall-clock seconds in the lock's zone.
        let local = try daily(from: t - 100 + 3600, 200, utc: false)
        XCTAssertTrue(local.contains(now, utcOffsetMinutes: 60))
        XCTAssertFalse(local.contains(now, utcOffsetMinutes: 0))
        // No rule: from start to end (or for good).
        XCTAssertTrue(try AliroSchedule(startTime: t - 10).contains(now, utcOffsetMinutes: 0))
        XCTAssertFalse(try AliroSchedule(startTime: t - 10, endTime: t - 5).contains(now, utcOffsetMinutes: 0))
        // Weekly, Monday only (t0 is a Monday), every week.
        let mondays = try AliroSchedule(startTime: t - 7 * 86_400 - 100, rule: try RecurrenceRule(durationSeconds: 200, pattern: .weekly, mask: 1))
        XCTAssertTrue(mondays.contains(now, utcOffsetMinutes: 0))
        XCTAssertFalse(mondays.contains(now.addingTimeInterval(86_400), utcOffsetMinutes: 0))
        // A pattern LockBench does not evaluate allows nothing and, as a deny schedule, is in force.
        let monthly = try AliroSchedule(startTime: t - 100, rule: try RecurrenceRule(durationSeconds: 200, pattern: .monthlyByDate, mask: 1))
        XCTAssertFalse(monthly.contains(now, utcOffsetMinutes: 0))
        XCTAssertTrue(monthly.inForce(now, utcOffsetMinutes: 0))
        XCTAssertEqual(try decide([.aliro(monthly)], deny: 1).denyReason, .outsideSchedule)
        // A hostile duration is looked back at most 400 days (bounded work), without trapping.
        let long = try daily(from: 0, UInt32.max)
        XCTAssertTrue(long.contains(now, utcOffsetMinutes: 0))
    }

    /// Bytes as the tool writes them: round trip, unknown keys skipped, each malformation refused
    /// with its field named.
    func testDecoding() throws {
        let rule = try RecurrenceRule(durationSeconds: 1800, pattern: .daily)
        XCTAssertEqual(rule.encoded(), [0, 0, 0x07, 0x08, 0, 0, 0, 0, 1, 1, 0])
        XCTAssertEqual(try RecurrenceRule(parsing: rule.encoded()), rule)
        let s = try AliroSchedule(startTime: t, rule: rule)
        let entry = try AccessSchedule(cbor: s.cbor)
        XCTAssertEqual(entry, .aliro(s))
        guard case .map(var m) = s.cbor else { return XCTFail() }
        m[.unsigned(9)] = .text("future")
        XCTAssertEqual(try AccessSchedule(cbor: .map(m)), .aliro(s), "unknown keys are skipped")
        let weekly = try WeeklySchedule(parsing: "mon-fri 08:00-18:00")
        XCTAssertEqual(try AccessSchedule(cbor: weekly.cbor), .weekly(weekly))

        func refused(_ change: (inout [CBOR: CBOR]) -> Void, _ words: String, line: UInt = #line) {
            guard case .map(var bad) = s.cbor else { return XCTFail() }
            change(&bad)
            XCTAssertThrowsError(try AccessSchedule(cbor: .map(bad)), line: line) { e in
                XCTAssertTrue("\(e)".contains(words), "\(e)", line: line)
            }
        }
        refused({ $0[.unsigned(2)] = .bytes([1, 2, 3]) }, "recurrence rule is 3 bytes, expected 11")
        refused({ $0[.unsigned(3)] = .unsigned(2) }, "only bit 0 (time in UTC) is defined")
        refused({ $0[.unsigned(3)] = .unsigned(0x100) }, "exceed one byte")
        refused({ $0[.unsigned(0)] = .unsigned(0x1_0000_0000) }, "≤ 0xFFFFFFFF")
        refused({ $0[.unsigned(0)] = nil }, "start time")
        refused({ $0[.unsigned(2)] = .bytes([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0]) }, "duration is 0")
        refused({ $0[.unsigned(2)] = .bytes([0, 0, 0, 1, 0, 0, 0, 0, 9, 1, 0]) }, "pattern 9")
        refused({ $0[.unsigned(2)] = .bytes([0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0]) }, "interval is 0")
        refused({ $0[.unsigned(2)] = .bytes([0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0]) }, "daily recurrence rule has mask 0")

        // A rule naming a schedule the document does not have, ids beyond a byte, too many schedules.
        var named = try ReaderRule(groupID: f.reader.groupID)
        named.allowScheduleIDs = 2
        XCTAssertThrowsError(try AccessData(id: [1], readers: [named], scheduleEntries: [.aliro(s)])) { e in
            XCTAssertTrue("\(e)".contains("names schedule id 1"), "\(e)")
        }
        named.allowScheduleIDs = 1
        let data = try AccessData(id: [1], readers: [named], scheduleEntries: [.aliro(s)])
        XCTAssertEqual(try AccessData(cbor: data.cbor), data, "round trip")
        guard case .map(var dm) = data.cbor, case .array(var rules) = dm[.unsigned(2)]!, case .map(var rm) = rules[0] else { return XCTFail() }
        rm[.unsigned(2)] = .unsigned(0x100)
        rules[0] = .map(rm)
        dm[.unsigned(2)] = .array(rules)
        XCTAssertThrowsError(try AccessData(cbor: .map(dm))) { e in XCTAssertTrue("\(e)".contains("allow schedule ids (key 2)"), "\(e)") }
        let many = CBOR.map([0: .int(1), 1: .bytes([1]), 2: .array([.map([0: .bytes(f.reader.groupID)])]),
                             3: .array(Array(repeating: s.cbor, count: AccessData.maxSchedules + 1))])
        XCTAssertThrowsError(try AccessData(cbor: many)) { e in XCTAssertTrue("\(e)".contains("at most 64"), "\(e)") }
    }
}
