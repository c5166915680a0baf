// Firmware versions as the certification tables print them: `04.12.00`, `2.01`, `AD.A.125`.
//
//   version = segment *("." segment)
//   segment = 1*(ALPHA / DIGIT)
//
// Ordering is segment by segment from the left, and the first differing segment decides:
// - two numeric segments compare as numbers (leading zeros are insignificant: `02` = `2`,
//   `02.12.100` > `02.12.72`), whatever their length;
// - a segment with a letter in it is a name (`AD`, `A`): it must equal the other segment exactly
//   (case included). Where names differ, or a name meets a number, the versions are on different
//   lines and have no order (`compare` returns nil: `AD.B.1` vs `AD.A.125`, `AD.A.125` vs `04.12.00`);
// - a missing segment counts as the number 0 (`02.12` = `02.12.0` < `02.12.72`); against a name
//   it leaves the versions unordered.

/// A parsed firmware version; `text` is kept exactly as written.
public struct FirmwareVersion: CustomStringConvertible, Sendable {
    enum Segment: Equatable, Sendable {
        /// Digits with leading zeros removed ("" for zero).
        case number([UInt8])
        case name(String)
    }

    public let text: String
    let segments: [Segment]

    public var description: String { text }

    /// Parses `text` (surrounding whitespace is not allowed; callers trim input first).
    public init(_ text: String) throws(CertificationError) {
        guard !text.isEmpty else { throw CertificationError(.invalidVersion, "empty firmware version") }
        var segments: [Segment] = []
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            guard !part.isEmpty else {
                throw CertificationError(.invalidVersion, "firmware version '\(text)' has an empty segment \(index + 1) (two dots, or a dot at an end)")
            }
            var allDigits = true
            for c in part.utf8 {
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): continue
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): allDigits = false
                default:
                    throw CertificationError(.invalidVersion, "firmware version '\(text)' contains '\(Character(Unicode.Scalar(c)))'; segments are letters and digits separated by dots")
                }
            }
            if allDigits {
                let digits = part.utf8.drop { $0 == UInt8(ascii: "0") }
                segments.append(.number(Array(digits)))
            } else {
                segments.append(.name(String(part)))
            }
        }
        self.text = text
        self.segments = segments
    }

    /// Digits a numeric segment of a device's firmware may have. The tables' versions have at most
    /// three (`125`); a version with a 20-digit segment is no shipped firmware, yet as a number it
    /// lies above every first certified version — it was "certified" (issue 20 §5).
    public static let maxDeviceSegmentDigits = 9

    /// A device's firmware (a `firmware check`, an inventory row, a lock configuration): parsed as
    /// `init(_:)`, and refused when a numeric segment is longer than `maxDeviceSegmentDigits`.
    public init(device text: String) throws(CertificationError) {
        try self.init(text)
        for (index, part) in text.split(separator: ".").enumerated()
        where part.utf8.allSatisfy({ (0x30...0x39).contains($0) }) && part.utf8.count > Self.maxDeviceSegmentDigits {
            throw CertificationError(.invalidVersion, "firmware version '\(text)': segment \(index + 1) has \(part.utf8.count) digits; a firmware segment has at most \(Self.maxDeviceSegmentDigits)")
        }
    }

    /// The order of two versions, or nil when they are on different lines (see the file comment).
    public static func compare(_ a: FirmwareVersion, _ b: FirmwareVersion) -> Ordering? {
        let count = max(a.segments.count, b.segments.count)
        for i in 0..<count {
            let x = i < a.segments.count ? a.segments[i] : .number([])
            let y = i < b.segments.count ? b.segments[i] : .number([])
            switch (x, y) {
            case let (.number(p), .number(q)):
                if p.count != q.count { return p.count < q.count ? .ascending : .descending }
                for (c, d) in zip(p, q) where c != d { return c < d ? .ascending : .descending }
            case let (.name(p), .name(q)):
                if p != q { return nil }
            default:
                return nil
            }
        }
        return .same
    }

    public enum Ordering: Sendable, Equatable { case ascending, same, descending }

    /// The branch a listed version starts: all its segments but the last (`60.47` for `60.47.14`).
    var branchLength: Int { segments.count - 1 }

    /// True when this version's first `length` segments equal `other`'s (numbers by value).
    func sharesPrefix(with other: FirmwareVersion, length: Int) -> Bool {
        guard segments.count >= length, other.segments.count >= length else { return false }
        for i in 0..<length where segments[i] != other.segments[i] { return false }
        return true
    }
}

/// Where a firmware version stands against a row's first certified versions.
public enum VersionStanding: Equatable, Sendable {
    /// At or above the first certified version of its branch.
    case atOrAbove
    /// Below it; `upgradeTo` is the nearest first certified version above.
    case below(upgradeTo: String)
    /// On a line the table does not list (e.g. `AD.B.1` against `AD.A.125`): not shown certified.
    case notComparable(upgradeTo: String)
}

extension FirmwareVersion {
    /// Where `self` stands against `listed`, a row's first certified versions.
    ///
    /// One version per branch; the branch of a listed version is all its segments but the last.
    /// - On a listed branch, the firmware is at/above when it is ≥ that branch's first certified
    ///   version (when a row lists two versions on one branch, the lower one starts it: the
    ///   published `60.47.14, 60.47.27` means ≥ 60.47.14 on branch 60.47).
    /// - On no listed branch, it is at/above only when it is newer than every listed version it can
    ///   be compared with (a later line inherits the certification); an older or in-between line is
    ///   below, with the nearest listed version above it as the upgrade.
    /// With a single listed version this is exactly `self ≥ listed[0]`.
    public func standing(against listed: [FirmwareVersion]) -> VersionStanding {
        precondition(!listed.isEmpty)
        // The first certified version of each listed branch that this version is on.
        var branchStart: FirmwareVersion?
        for v in listed where sharesPrefix(with: v, length: v.branchLength) {
            if let current = branchStart, FirmwareVersion.compare(v, current) != .ascending { continue }
            branchStart = v
        }
        if let start = branchStart {
            switch FirmwareVersion.compare(self, start) {
            case .same?, .descending?: return .atOrAbove
            case .ascending?: return .below(upgradeTo: start.text)
            case nil: return .notComparable(upgradeTo: start.text)
            }
        }
        var comparable = 0
        var nearestAbove: FirmwareVersion?
        for v in listed {
            guard let order = FirmwareVersion.compare(self, v) else { continue }
            comparable += 1
            if order != .descending {
                if let n = nearestAbove, FirmwareVersion.compare(v, n) != .ascending { continue }
                nearestAbove = v
            }
        }
        if comparable == 0 { return .notComparable(upgradeTo: listed[0].text) }
        if let nearestAbove { return .below(upgradeTo: nearestAbove.text) }
        return .atOrAbove
    }
}
