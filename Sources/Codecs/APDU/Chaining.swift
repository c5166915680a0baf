import ByteCore

// Command chaining (ISO/IEC 7816-4 §5.4.1) and response chaining with GET RESPONSE (§5.3.4, §7.6.1).
//
// Sizes through libnfc: one command ≤ 262 bytes, one response ≤ 263 bytes. LockBench therefore
// sends at most 255 data bytes per command (4 header + Lc + 255 + Le = 261) and at most 256 data
// bytes per response (256 + SW = 258). Both limits are parameters; these are the defaults.

/// Reader side: cuts one logical command into a chain. Every part but the last has CLA | 0x10
/// and no Le; the last has the original CLA and Le. An extended-length command chains in
/// extended-length parts (its Le may exceed a short one's 256).
public enum CommandChainer {
    public static let defaultChunk = CommandAPDU.maxShortData

    public static func split(_ command: CommandAPDU, chunk: Int = defaultChunk) -> [CommandAPDU] {
        precondition(chunk >= 1 && chunk <= CommandAPDU.maxShortData)
        guard command.data.count > chunk else { return [command] }
        var parts: [CommandAPDU] = []
        var offset = 0
        while offset < command.data.count {
            let end = min(offset + chunk, command.data.count)
            let last = end == command.data.count
            parts.append(CommandAPDU(cla: last ? command.cla : command.cla | CommandAPDU.chainingBit,
                                     ins: command.ins, p1: command.p1, p2: command.p2,
                                     data: Array(command.data[offset..<end]), le: last ? command.le : nil,
                                     extendedLength: command.extendedLength))
            offset = end
        }
        return parts
    }
}

/// Card side: an incremental assembler for chained commands. Feed each received command; it
/// answers `.needMore` (reply 9000) until the last part, then the whole command.
public struct CommandAssembler: Sendable {
    public enum Step: Equatable, Sendable {
        /// A chained part was stored; answer 9000 and wait for the next.
        case needMore
        /// The complete logical command (CLA without the chaining bit).
        case complete(CommandAPDU)
    }

    private enum State: Sendable {
        case idle
        case collecting(header: CommandAPDU, data: [UInt8])
    }

    private var state: State = .idle
    /// The largest logical command accepted (bytes of data).
    public let limit: Int

    public init(limit: Int = 8192) { self.limit = limit }

    public var isCollecting: Bool { if case .collecting = state { return true } else { return false } }

    public mutating func reset() { state = .idle }

    public mutating func feed(_ command: CommandAPDU) throws(APDUError) -> Step {
        switch state {
        case .idle:
            guard command.isChained else { return .complete(command) }
            guard command.data.count <= limit else { throw APDUError(.chainTooLong, "chain exceeds \(limit) bytes") }
            state = .collecting(header: command, data: command.data)
            return .needMore
        case .collecting(let header, let data):
            guard command.cla | CommandAPDU.chainingBit == header.cla, command.ins == header.ins,
                  command.p1 == header.p1, command.p2 == header.p2 else {
                state = .idle
                throw APDUError(.chainMismatch, "chained command header changed mid-chain")
            }
            let all = data + command.data
            guard all.count <= limit else {
                state = .idle
                throw APDUError(.chainTooLong, "chain exceeds \(limit) bytes")
            }
            if command.isChained {
                state = .collecting(header: header, data: all)
                return .needMore
            }
            state = .idle
            return .complete(CommandAPDU(cla: command.cla, ins: command.ins, p1: command.p1, p2: command.p2,
                                         data: all, le: command.le, extendedLength: command.extendedLength))
        }
    }
}

/// Card side: holds a long response and hands it out in parts: the first part with `61xx`, each
/// GET RESPONSE gets the next part, the last part carries the final status word.
public struct ResponseChainer: Sendable {
    public static let defaultChunk = 256
    private var pending: [UInt8] = []
    private var finalStatus: StatusWord = .success
    public let chunk: Int

    public init(chunk: Int = defaultChunk) {
        precondition(chunk >= 1 && chunk <= 256)
        self.chunk = chunk
    }

    public var hasPending: Bool { !pending.isEmpty }

    public mutating func reset() { pending = [] }

    /// The first response APDU for `data` ‖ `status`, at most `le` bytes of data (the command's
    /// Le: a card answers no more than the reader asked for).
    public mutating func start(_ data: [UInt8], status: StatusWord = .success, le: Int = 256) -> ResponseAPDU {
        pending = data
        finalStatus = status
        return next(le: le)
    }

    /// The next part, for a GET RESPONSE asking for up to `le` bytes.
    public mutating func next(le: Int) -> ResponseAPDU {
        let n = min(max(le, 1), chunk, pending.count)
        let part = Array(pending.prefix(n))
        pending.removeFirst(n)
        if pending.isEmpty { return ResponseAPDU(data: part, status: finalStatus) }
        return ResponseAPDU(data: part, status: .bytesRemaining(pending.count))
    }
}

/// Reader side: an incremental assembler for `61xx` response chains. Feed each response; it asks
/// for GET RESPONSE until the chain ends, then yields the whole response.
public struct ResponseAssembler: Sendable {
    public enum Step: Equatable, Sendable {
        /// Send this GET RESPONSE next.
        case send(CommandAPDU)
        /// The complete response: all data parts and the final status word.
        case complete(ResponseAPDU)
    }

    private var data: [UInt8] = []
    private var parts = 0
    /// The longest response accepted (bytes of data).
    public let limit: Int

    public init(limit: Int = 16384) { self.limit = limit }

    /// GET RESPONSE `00 C0 00 00 Le` for `sw2` bytes (00 = 256).
    public static func getResponse(_ sw2: UInt8) -> CommandAPDU {
        CommandAPDU(cla: 0x00, ins: 0xC0, p1: 0, p2: 0, le: sw2 == 0 ? 256 : Int(sw2))
    }

    public mutating func feed(_ response: ResponseAPDU) throws(APDUError) -> Step {
        data += response.data
        parts += 1
        guard data.count <= limit else { throw APDUError(.responseChain, "response chain exceeds \(limit) bytes") }
        if response.status.isBytesRemaining {
            return .send(ResponseAssembler.getResponse(response.status.sw2))
        }
        let whole = ResponseAPDU(data: data, status: response.status)
        data = []
        parts = 0
        return .complete(whole)
    }
}
