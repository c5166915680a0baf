import ByteCore

/// Why the lock could not load or store something. Tests match on `code`.
public struct LockError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// A file could not be read, written, synced or renamed (errno in the reason).
        case io = "lock.io"
        /// A configuration file that is not valid JSON of the documented shape.
        case invalidConfiguration = "lock.invalid_configuration"
        /// A key, id or document named by the configuration is unusable.
        case invalidIdentity = "lock.invalid_identity"
        /// The persisted state file is not readable state.
        case corruptState = "lock.corrupt_state"
        /// A value given to the lock is out of range (a clock moved past year 9999, …).
        case invalidInput = "lock.invalid_input"
        /// Another process has the state directory open (a running `lock run`).
        case stateInUse = "lock.state_in_use"
    }
    public var code: Code
    public var reason: String
    public var file: String
    public var line: Int
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code; self.reason = reason; self.file = file; self.line = line
    }
    public static func == (a: LockError, b: LockError) -> Bool { a.code == b.code && a.reason == b.reason }
}

extension LockError.Code {
    /// The machine, not the input, is at fault: a CLI exits 3 rather than 2.
    public var isEnvironment: Bool { self == .io || self == .stateInUse }
}
