import ArgumentParser
import Foundation
import TrustModel
import TrustCore

/// `trust door show ID`: which revocation list a door holds and what phones saw there, as phones
/// reported it after their taps (`phone run` uploads each transaction's door report).
struct DoorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "door", abstract: "What phones reported of a door: its revocation serial and their recent taps.",
        subcommands: [Show.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A door's revocation serial (at least: the newest list a phone delivered at its request) and its newest reports.",
            discussion: """
            An Aliro lock tells a phone neither its revocation serial nor its access log; it asks for the \
            phone's list in step-up only when that list is newer than its own. So each phone reports, \
            after a tap, the door (GROUP:SUB, the reader identifier AUTH0 named), the decision from the \
            reader status (0101 opened), its own list's serial and whether the lock asked for it. A \
            delivered list is the lock's serial from then on, or a newer one. The newest \
            \(DoorRecord.retainedReports) reports are kept per door, \(DoorRecord.maxDoors) doors in all; a phone \
            reports only doors its user holds an active grant on. Also GET /v1/admin/doors/{id} \
            (scope doors:read).
            """)
        @OptionGroup var site: TrustCommand.SiteOptions
        @Argument(help: ArgumentHelp("The door: GROUP:SUB in hex, as `phone run` prints it (door-reported door=…).", valueName: "id"))
        var door: String
        func run() async throws {
            let door = self.door.lowercased()
            let record = try await site.showing("door", door) { try await $0.door(door) }
            if site.json { return try TrustCommand.SiteOptions.printJSON(record) }
            print("door \(record.door)")
            print("revocation serial: " + (record.revocationSerial.map { "\($0) (delivered by \(record.revocationReportedBy ?? "?") at \(record.revocationReportedAt ?? "?"))" } ?? "none delivered"))
            print("reports: \(record.reportCount) (newest \(record.reports.count) kept)")
            for r in record.reports {
                print("\(r.at)  \(r.device ?? "?")  \(r.decision.rawValue)" + (r.readerStatus.map { "  status=\($0)" } ?? "")
                      + "  list=\(r.revocationSerial.map(String.init) ?? "-")" + (r.revocationDelivered ? " delivered" : ""))
            }
        }
    }
}
