// One verdict for one device: model + firmware (+ the reader it is paired with).

/// The kinds of verdict, with their stable names (JSON, CSV, JUnit).
public enum VerdictKind: String, Sendable, CaseIterable {
    case certified
    case upgradeRequired = "upgrade-required"
    case inProcess = "in-process"
    case notPursued = "not-pursued"
    case requirementNotMet = "requirement-not-met"
    case unknownModel = "unknown-model"

    /// The kind as a JSON key (summary counts): camelCase, as every key LockBench prints.
    public var jsonKey: String {
        switch self {
        case .certified: "certified"
        case .upgradeRequired: "upgradeRequired"
        case .inProcess: "inProcess"
        case .notPursued: "notPursued"
        case .requirementNotMet: "requirementNotMet"
        case .unknownModel: "unknownModel"
        }
    }
}

public struct Verdict: Sendable {
    public var kind: VerdictKind
    /// The matched row (nil for an unknown model).
    public var row: CertificationRow?
    /// The version to upgrade to (upgrade-required), or the row's first certified version.
    public var minimumFirmware: String?
    /// Where the firmware stands against the row's first certified versions (nil when not pursued
    /// or unknown); informative for rows in process.
    public var standing: VersionStanding?
    /// The requirement that is not met (requirement-not-met, or alongside upgrade-required).
    public var unmetRequirement: Requirement?
    /// "Did you mean" names for an unknown model.
    public var suggestions: [String]
    /// A short answer: `certified`, `upgrade to ≥ 02.12.72`, `certification in process`, …
    public var summary: String
    /// One sentence explaining it.
    public var detail: String

    public var isCertified: Bool { kind == .certified }
}

extension CertificationTables {
    /// The verdict for `model` on `firmware`, paired with `reader` (nil: none known).
    ///
    /// Order: unknown model, then status (not pursued, in process), then firmware, then the
    /// requirement; when both firmware and requirement fail the verdict is upgrade-required and
    /// the detail names the requirement too.
    public func check(model: String, firmware: FirmwareVersion, reader: String?) -> Verdict {
        guard let row = row(named: model) else {
            let suggestions = suggestions(for: model)
            let hint = suggestions.isEmpty ? "" : "; did you mean \(Self.list(suggestions, or: true))?"
            return Verdict(kind: .unknownModel, row: nil, minimumFirmware: nil, standing: nil, unmetRequirement: nil,
                           suggestions: suggestions, summary: "unknown model" + hint,
                           detail: "'\(model)' is not a model or variant in the tables (\(origin))" + hint)
        }
        let name = row.publishedName
        if row.status == .notPursued {
            return Verdict(kind: .notPursued, row: row, minimumFirmware: nil, standing: nil, unmetRequirement: nil,
                           suggestions: [], summary: "not pursued",
                           detail: "\(name): \(row.hardware) (status n/a); no firmware is certified")
        }
        let standing = firmware.standing(against: row.firstCertified)
        let first = row.firstCertifiedText
        if row.status == .inProcess {
            let at: String
            switch standing {
            case .atOrAbove: at = "\(firmware) is at or above the listed first firmware \(first)"
            case .below: at = "\(firmware) is below the listed first firmware \(first)"
            case .notComparable: at = "\(firmware) is not on the line of the listed first firmware \(first)"
            }
            return Verdict(kind: .inProcess, row: row, minimumFirmware: first, standing: standing, unmetRequirement: nil,
                           suggestions: [], summary: "certification in process",
                           detail: "\(name): certification is in process, so no firmware is certified yet; \(at)")
        }
        let requirementMet = row.requirement.map { satisfies($0, reader: reader) } ?? true
        let unmet = requirementMet ? nil : row.requirement
        let also = unmet.map { "; it also must have an \($0.phrase)" + (reader.map { " ('\($0)' is not one)" } ?? "") } ?? ""
        switch standing {
        case .below(let target):
            return Verdict(kind: .upgradeRequired, row: row, minimumFirmware: target, standing: standing, unmetRequirement: unmet,
                           suggestions: [], summary: "upgrade to ≥ \(target)",
                           detail: "\(name): firmware \(firmware) is below \(target), the first certified version\(also)")
        case .notComparable(let target):
            return Verdict(kind: .upgradeRequired, row: row, minimumFirmware: target, standing: standing, unmetRequirement: unmet,
                           suggestions: [], summary: "upgrade to ≥ \(target)",
                           detail: "\(name): firmware \(firmware) is not on the line of \(first) and cannot be shown to be at or above it\(also)")
        case .atOrAbove:
            break
        }
        if let unmet {
            let given = reader.map { "'\($0)' is not one" } ?? "no reader is given"
            return Verdict(kind: .requirementNotMet, row: row, minimumFirmware: first, standing: standing, unmetRequirement: unmet,
                           suggestions: [], summary: "requirement not met: needs an \(unmet.phrase)",
                           detail: "\(name) must have an \(unmet.phrase) (\(given)); firmware \(firmware) is at or above \(first)")
        }
        return Verdict(kind: .certified, row: row, minimumFirmware: first, standing: standing, unmetRequirement: nil,
                       suggestions: [], summary: "certified",
                       detail: "\(name): firmware \(firmware) is at or above \(first), the first certified version")
    }

    static func list(_ items: [String], or: Bool) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default: return items.dropLast().joined(separator: ", ") + (or ? " or " : " and ") + items.last!
        }
    }
}
