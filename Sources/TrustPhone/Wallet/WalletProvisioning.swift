import Foundation

// The Schlage employee-badge guide's "Credential Provisioning Decision Tree" ("the decision tree
// an application should follow to determine if an available NFC should be provisioned to the
// wallet"), as a table the virtual phone walks. Each row is one of the guide's seven decisions,
// quoted; each stop is one of its outcomes with the guide's words.

/// What the phone knows about itself and its Wallet (PKPassLibrary in the guide).
public struct WalletState: Sendable, Equatable, Codable {
    public enum Device: String, Sendable, Codable, CaseIterable { case iphone, ipad, ipod }
    /// The local pass for this user's credential (`passActivationState` of the PKPaymentPass whose
    /// primaryAccountIdentifier matches).
    public enum Pass: String, Sendable, Codable, CaseIterable {
        case none, active, deactivated
        /// "suspended by the user through the iOS wallet app, through iCloud …"
        case suspendedByUser = "suspended-by-user"
        /// "… or by the Access Control system".
        case suspendedBySystem = "suspended-by-system"
    }
    /// A paired Apple Watch, and whether the pass is on it (`remoteSecureElementPasses`).
    public enum Watch: String, Sendable, Codable, CaseIterable { case none, paired
        case pairedWithPass = "paired-with-pass" }

    public var device: Device = .iphone
    /// `PKPassLibrary.isPassLibraryAvailable()`.
    public var passLibraryAvailable = true
    public var pass: Pass = .none
    public var watch: Watch = .none
    /// `PKAddSecureElementPassViewController.canAddSecureElementPass(configuration:)`; nil (auto):
    /// true, as a phone with an iCloud account and a passcode answers.
    public var canAddSecureElementPass: Bool?

    public init() {}

    public var canAdd: Bool { canAddSecureElementPass ?? true }

    /// Sets one field by its scenario/console name (`device ipad`, `library no`, `pass suspended-by-user`,
    /// `watch paired-with-pass`, `can-add yes|no|auto`).
    public mutating func set(_ field: String, _ value: String) throws(WalletError) {
        func bool(_ v: String) throws(WalletError) -> Bool {
            switch v { case "yes", "true": return true; case "no", "false": return false
            default: throw WalletError("\(field) takes yes or no, not \"\(v.prefix(40))\"") }
        }
        switch field {
        case "device":
            guard let d = Device(rawValue: value) else { throw WalletError("device is one of \(Device.allCases.map(\.rawValue).joined(separator: ", "))") }
            device = d
        case "library": passLibraryAvailable = try bool(value)
        case "pass":
            guard let p = Pass(rawValue: value) else { throw WalletError("pass is one of \(Pass.allCases.map(\.rawValue).joined(separator: ", "))") }
            pass = p
        case "watch":
            guard let w = Watch(rawValue: value) else { throw WalletError("watch is one of \(Watch.allCases.map(\.rawValue).joined(separator: ", "))") }
            watch = w
        case "can-add": canAddSecureElementPass = value == "auto" ? nil : try bool(value)
        default: throw WalletError("unknown wallet field \"\(field.prefix(40))\": device, library, pass, watch, can-add")
        }
    }

    public var summary: String {
        "device=\(device.rawValue) library=\(passLibraryAvailable ? "yes" : "no") pass=\(pass.rawValue) watch=\(watch.rawValue) can-add=\(canAddSecureElementPass.map { $0 ? "yes" : "no" } ?? "auto")"
    }
}

public struct WalletError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ m: String) { message = m }
    public var description: String { message }
}

/// Where the tree ends.
public enum WalletOutcome: String, Sendable, Equatable, Codable, CaseIterable {
    /// "Provision Pass - If the app reaches this point, either from Decision 3 or Decision 7, it provisions the credential."
    case provision
    /// Decision 1 stop.
    case notIPhone = "not-iphone"
    /// Decision 2 stop.
    case passLibraryUnavailable = "pass-library-unavailable"
    /// Decision 4 stop.
    case deactivated
    /// Decision 5 stop: link to the pass in Wallet.
    case suspended
    /// Decision 6 stop: local and remote pass both exist.
    case alreadyProvisioned = "already-provisioned"
    /// Decision 7 stop.
    case cannotAdd = "cannot-add"
}

/// The tree's answer: the outcome, the decisions taken (number and answer), the message the app
/// shows, and for `provision` where the pass goes.
public struct WalletDecision: Sendable, Equatable, CustomStringConvertible {
    public var outcome: WalletOutcome
    public var path: [(decision: Int, answer: Bool)]
    public var message: String
    public var description: String {
        "\(outcome.rawValue) [" + path.map { "\($0.decision)\($0.answer ? "y" : "n")" }.joined(separator: " ") + "]: \(message)"
    }
    public static func == (a: Self, b: Self) -> Bool {
        a.outcome == b.outcome && a.message == b.message && a.path.map(\.decision) == b.path.map(\.decision) && a.path.map(\.answer) == b.path.map(\.answer)
    }
}

public enum WalletProvisioning {
    enum Next { case decision(Int), stop(WalletOutcome) }

    /// One of the guide's decisions: its words, the question asked of the state, where each answer leads.
    struct Row {
        var number: Int
        var guide: String
        var ask: @Sendable (WalletState) -> Bool
        var yes: Next
        var no: Next
    }

    /// The guide's seven decisions, in its words.
    static let table: [Row] = [
        Row(number: 1, guide: "Is Current Device iPhone? - The device type needs to be determined as not all iOS devices (namely iPads) have NFC capabilities.",
            ask: { $0.device == .iphone }, yes: .decision(2), no: .stop(.notIPhone)),
        Row(number: 2, guide: "Is the Pass Library available? - The app cannot continue if it does not have necessary resources to generate the pass.",
            ask: { $0.passLibraryAvailable }, yes: .decision(3), no: .stop(.passLibraryUnavailable)),
        Row(number: 3, guide: "Is there a pass already provisioned?",
            ask: { $0.pass != .none }, yes: .decision(4), no: .stop(.provision)),
        Row(number: 4, guide: "Is the existing pass deactivated? - The app will not provision a credential if the existing credential has been deactivated.",
            ask: { $0.pass == .deactivated }, yes: .stop(.deactivated), no: .decision(5)),
        Row(number: 5, guide: "Is the pass Suspended? - The pass can be suspended by the user through the iOS wallet app, through iCloud or by the Access Control system.",
            ask: { $0.pass == .suspendedByUser || $0.pass == .suspendedBySystem }, yes: .stop(.suspended), no: .decision(6)),
        Row(number: 6, guide: "Is there a remote pass provisioned? - A remote pass (credential) can be provisioned to devices associated with the iOS device and the user, such as a watch.",
            // Yes also without a paired watch: then there is no remote device to add the pass to,
            // and provisioning again would only bring the wallet's generic error (guide, Step 15).
            ask: { $0.watch != .paired }, yes: .stop(.alreadyProvisioned), no: .decision(7)),
        Row(number: 7, guide: "Can the configuration as built be provisioned? - The app will confirm that the configuration is still valid for provisioning pass.",
            ask: { $0.canAdd }, yes: .stop(.provision), no: .stop(.cannotAdd)),
    ]

    /// What the app tells the user at each outcome, quoting the guide (and, for `cannot-add`,
    /// the recovery suggestion the guide gives for PKAddSecureElementPassError).
    static func message(_ outcome: WalletOutcome, _ state: WalletState, from decision: Int) -> String {
        switch outcome {
        case .provision:
            return decision == 7
                ? "Provision Pass: \"If the credential is on the iOS device but not on the remote device, provisioning can still be completed in order to add the pass to the remote device.\""
                : "Provision Pass: \"If the app reaches this point, either from Decision 3 or Decision 7, it provisions the credential.\""
        case .notIPhone: return "This device cannot hold the badge: \"not all iOS devices (namely iPads) have NFC capabilities.\""
        case .passLibraryUnavailable: return "Wallet is not available: \"The app cannot continue if it does not have necessary resources to generate the pass.\""
        case .deactivated: return "The badge was deactivated: \"The app will not provision a credential if the existing credential has been deactivated.\""
        case .suspended:
            let by = state.pass == .suspendedBySystem ? "by the Access Control system" : "by the user through the iOS wallet app or iCloud"
            return "The badge is suspended (\(by)): \"If a pass is suspended, a link to the pass in the wallet can be provided to the user for further action on their part.\""
        case .alreadyProvisioned:
            return "The badge is already in Wallet: \"Checking for the existence of a remote pass prior to provisioning will allow the application to proactively notify the user the pass (credential) is already provisioned.\""
        case .cannotAdd: return "The badge cannot be added: \"Please verify iCloud and Passcode are setup on current device.\""
        }
    }

    /// Walks the table from decision 1 (each decision is visited at most once).
    public static func decide(_ state: WalletState) -> WalletDecision {
        var path = [(decision: Int, answer: Bool)]()
        var number = 1
        while path.count < table.count, let row = table.first(where: { $0.number == number }) {
            let answer = row.ask(state)
            path.append((row.number, answer))
            switch answer ? row.yes : row.no {
            case .decision(let n): number = n
            case .stop(let outcome): return WalletDecision(outcome: outcome, path: path, message: message(outcome, state, from: row.number))
            }
        }
        // Unreachable with a well-formed table (every path ends in a stop); refuse rather than provision.
        return WalletDecision(outcome: .cannotAdd, path: path, message: message(.cannotAdd, state, from: number))
    }

    /// The guide's words for one decision (for `wallet-state` and docs).
    public static func guide(_ decision: Int) -> String? { table.first { $0.number == decision }?.guide }
}
