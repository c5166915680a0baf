import ByteCore
import Synchronization

/// LockBench's stand-in transaction until the runtime wires the engine: the reader SELECTs the
/// Aliro AID, then sends `ECHO` commands (`80 EE 00 00 Lc data 00`) and grants when every
/// response echoes its data with `9000`. Used by `lockbench ble lock|phone`, the tests and the
/// benchmark; the access protocol itself lives in AccessProtocol.
public enum EchoFlow {
    public static let aid: [UInt8] = [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01]
    public static let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, UInt8(aid.count)] + aid + [0x00]
    public static let echoINS: UInt8 = 0xEE
    /// Completion payloads of the `[02][03]` notification, plain (the echo flow has no keys):
    /// attribute `00 02`, no unsolicited reporting, reader status `01` unsecured (granted) or
    /// `00` secured — the official layout (aliro-actuator `create_access_protocol_completed`).
    public static let granted: [UInt8] = [0x00, 0x02, 0x00, 0x01]
    public static let denied: [UInt8] = [0x00, 0x02, 0x00, 0x00]

    public static func completion(granted: Bool) -> [UInt8] { granted ? Self.granted : Self.denied }

    public static func echo(_ data: [UInt8]) -> [UInt8] { [0x80, echoINS, 0x00, 0x00, UInt8(data.count)] + data + [0x00] }

    /// Runs the reader side over `transceiver`; returns true to grant.
    public static func runReader(_ transceiver: APDUTransceiver, rounds: Int = 2) -> Bool {
        do {
            let fci = try transceiver.transceive(select)
            guard fci.suffix(2) == [0x90, 0x00] else { return false }
            for i in 0..<rounds {
                let data = (0..<16).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }
                guard try transceiver.transceive(echo(data)) == data + [0x90, 0x00] else { return false }
            }
            return true
        } catch {
            return false
        }
    }

    /// The lock's transaction for the echo flow, for a reader loop over `BLELock`: true = grant
    /// (the loop has the lock send `granted` or `denied` in the completed notification).
    public static func lockTransaction(rounds: Int = 2, decided: (@Sendable (Bool) -> Void)? = nil) -> @Sendable (BLEReaderSession) -> Bool {
        { session in
            let ok = runReader(session, rounds: rounds)
            decided?(ok)
            return ok
        }
    }
}

/// The credential side of the echo flow: answers SELECT of the Aliro AID with an FCI, echoes
/// `ECHO` data; `6A82` for another AID, `6D00` for another INS. `refuse` makes it answer `6982`
/// to ECHO (a denial).
public final class EchoCredential: APDUResponder {
    fileprivate struct State {
        var refuse: Bool
        var commands: [[UInt8]] = []
        var selected = false
    }
    private let state: Mutex<State>
    public var refuse: Bool {
        get { state.withLock { $0.refuse } }
        set { state.withLock { $0.refuse = newValue } }
    }
    public var commands: [[UInt8]] { state.withLock { $0.commands } }

    public init(refuse: Bool = false) { state = Mutex(State(refuse: refuse)) }

    public func respond(to command: [UInt8]) -> [UInt8] {
        state.withLock { $0.respond(to: command) }
    }

    public func reset() { state.withLock { $0.selected = false } }
}

extension EchoCredential.State {
    fileprivate mutating func respond(to command: [UInt8]) -> [UInt8] {
        commands.append(command)
        guard command.count >= 4 else { return [0x67, 0x00] }
        switch (command[0], command[1]) {
        case (0x00, 0xA4):
            guard command.count >= 5 + EchoFlow.aid.count, Array(command[5..<(5 + EchoFlow.aid.count)]) == EchoFlow.aid else { return [0x6A, 0x82] }
            selected = true
            return [0x6F, 0x0D, 0x84, 0x09] + EchoFlow.aid + [0xA5, 0x00] + [0x90, 0x00]
        case (0x80, EchoFlow.echoINS):
            guard selected else { return [0x69, 0x85] }
            guard !refuse else { return [0x69, 0x82] }
            guard command.count >= 5, command.count >= 5 + Int(command[4]) else { return [0x67, 0x00] }
            return Array(command[5..<(5 + Int(command[4]))]) + [0x90, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }
}
