/// What one presentation came to, as the phone's radio saw it.
public struct PhoneTap: Sendable, Equatable {
    /// Command APDUs the phone answered.
    public var commands: Int
    /// True when the lock ended the transaction (EXCHANGE or CONTROL FLOW answered, the socket
    /// closed, BLE's transaction completed); false when `timeout` passed first.
    public var ended: Bool
    /// The lock's decision where the radio carries it (BLE's `completed` notification), else nil.
    public var granted: Bool?

    public init(commands: Int, ended: Bool, granted: Bool? = nil) {
        self.commands = commands
        self.ended = ended
        self.granted = granted
    }
}
