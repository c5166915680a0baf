import ByteCore

// ISO/IEC 7816-4 §5.1 command-response pairs.
//
//   command  = CLA INS P1 P2                      ; case 1
//            / CLA INS P1 P2 Le                   ; case 2S  (Le 00 means 256)
//            / CLA INS P1 P2 Lc data              ; case 3S  (Lc 01-FF)
//            / CLA INS P1 P2 Lc data Le           ; case 4S
//            / CLA INS P1 P2 00 Le1 Le2           ; case 2E  (Le 0000 means 65 536)
//            / CLA INS P1 P2 00 Lc1 Lc2 data      ; case 3E  (Lc 0001-FFFF)
//            / CLA INS P1 P2 00 Lc1 Lc2 data Le1 Le2 ; case 4E
//   response = [data] SW1 SW2                     ; data at most 256 bytes (LockBench answers short)
//
// Extended commands are parsed because the official case NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH
// follows a response chain with GET RESPONSE `00 C0 00 00 00 01 13` (Le 275).

/// One error type for the APDU layer: a stable code, a reason, and where it applies.
public struct APDUError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        /// Fewer than 4 header bytes (command) or 2 status bytes (response).
        case truncated = "apdu.truncated"
        /// Lc says more or fewer data bytes than present (and the rest is not a single Le).
        case badLength = "apdu.bad_length"
        /// A malformed extended length field: `00` then one byte, or an extended Lc of `0000`.
        case extendedLength = "apdu.extended_length"
        /// Data or Le out of the short range when encoding.
        case tooLong = "apdu.too_long"
        /// A chained command whose header differs from the chain's first command.
        case chainMismatch = "apdu.chain_mismatch"
        /// The assembled chain exceeds the assembler's limit.
        case chainTooLong = "apdu.chain_too_long"
        /// A response chain that did not finish as expected (bad SW mid-chain, too many parts).
        case responseChain = "apdu.response_chain"
    }
    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

}

/// SW1 SW2, with the values LockBench uses named after ISO/IEC 7816-4 §5.6 (Table 5/6).
public struct StatusWord: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ sw1: UInt8, _ sw2: UInt8) { rawValue = UInt16(sw1) << 8 | UInt16(sw2) }

    public var sw1: UInt8 { UInt8(rawValue >> 8) }
    public var sw2: UInt8 { UInt8(rawValue & 0xFF) }
    public var bytes: [UInt8] { [sw1, sw2] }
    public var description: String { Hex.encode(bytes).uppercased() }

    /// 9000 Normal processing.
    public static let success = StatusWord(rawValue: 0x9000)
    /// 61xx Normal processing, xx more bytes available with GET RESPONSE (00 = 256 or more).
    public static func bytesRemaining(_ count: Int) -> StatusWord { StatusWord(0x61, UInt8(truncatingIfNeeded: min(count, 256))) }
    /// 6400 Execution error, state of non-volatile memory unchanged.
    public static let executionError = StatusWord(rawValue: 0x6400)
    /// 6700 Wrong length (Lc or Le).
    public static let wrongLength = StatusWord(rawValue: 0x6700)
    /// 6701 Wrong length: a strict Aliro device's answer to a missing or unexpected Le.
    public static let wrongLengthLe = StatusWord(rawValue: 0x6701)
    /// 6883 Last command of the chain expected.
    public static let lastCommandOfChainExpected = StatusWord(rawValue: 0x6883)
    /// 6884 Command chaining not supported.
    public static let commandChainingNotSupported = StatusWord(rawValue: 0x6884)
    /// 6982 Security status not satisfied (LockBench: the reader's signature did not verify).
    public static let securityStatusNotSatisfied = StatusWord(rawValue: 0x6982)
    /// 6985 Conditions of use not satisfied (command out of sequence).
    public static let conditionsNotSatisfied = StatusWord(rawValue: 0x6985)
    /// 6988 Incorrect secure messaging data objects (LockBench: a secure-channel tag did not verify).
    public static let incorrectSecureMessaging = StatusWord(rawValue: 0x6988)
    /// 6A80 Incorrect parameters in the command data field.
    public static let incorrectData = StatusWord(rawValue: 0x6A80)
    /// 6A82 File or application not found.
    public static let fileNotFound = StatusWord(rawValue: 0x6A82)
    /// 6A86 Incorrect parameters P1-P2.
    public static let incorrectP1P2 = StatusWord(rawValue: 0x6A86)
    /// 6A88 Referenced data not found (LockBench: no common protocol version).
    public static let referencedDataNotFound = StatusWord(rawValue: 0x6A88)
    /// 6D00 Instruction code not supported or invalid.
    public static let insNotSupported = StatusWord(rawValue: 0x6D00)
    /// 6E00 Class not supported.
    public static let claNotSupported = StatusWord(rawValue: 0x6E00)
    /// 6F00 No precise diagnosis.
    public static let noPreciseDiagnosis = StatusWord(rawValue: 0x6F00)

    public var isSuccess: Bool { self == .success }
    public var isBytesRemaining: Bool { sw1 == 0x61 }
}

/// A command APDU, short or extended length.
public struct CommandAPDU: Equatable, Hashable, Sendable {
    public var cla: UInt8
    public var ins: UInt8
    public var p1: UInt8
    public var p2: UInt8
    /// Command data: 0…255 bytes short, 0…65 535 extended (absent when empty).
    public var data: [UInt8]
    /// Expected response length: 1…256 short (`00` on the wire means 256), 1…65 536 extended
    /// (`0000` means 65 536); nil when Le is absent.
    public var le: Int?
    /// Extended length fields (`00 Lc1 Lc2`, `Le1 Le2`), as parsed or to encode.
    public var extendedLength: Bool

    public init(cla: UInt8, ins: UInt8, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [], le: Int? = nil, extendedLength: Bool = false) {
        self.cla = cla
        self.ins = ins
        self.p1 = p1
        self.p2 = p2
        self.data = data
        self.le = le
        self.extendedLength = extendedLength
    }

    /// The largest extended data field and Le.
    public static let maxExtendedData = 0xFFFF
    public static let maxExtendedLe = 0x1_0000

    /// Bit 0x10 of CLA: more commands of this chain follow (ISO/IEC 7816-4 §5.4.1).
    public static let chainingBit: UInt8 = 0x10
    public var isChained: Bool { cla & CommandAPDU.chainingBit != 0 }

    /// The largest command LockBench sends in one piece: 5 header/Lc bytes + 255 data + Le = 261,
    /// inside libnfc's 262-byte command limit.
    public static let maxShortData = 255

    public func encoded() throws(APDUError) -> [UInt8] {
        if extendedLength { return try encodedExtended() }
        guard data.count <= CommandAPDU.maxShortData else {
            throw APDUError(.tooLong, "\(data.count) data bytes; short APDUs carry at most 255 (chain them)")
        }
        var out = [cla, ins, p1, p2]
        if !data.isEmpty { out.append(UInt8(data.count)); out += data }
        if let le {
            guard (1...256).contains(le) else { throw APDUError(.tooLong, "Le \(le) outside 1…256") }
            out.append(UInt8(truncatingIfNeeded: le))
        }
        return out
    }

    private func encodedExtended() throws(APDUError) -> [UInt8] {
        guard data.count <= CommandAPDU.maxExtendedData else {
            throw APDUError(.tooLong, "\(data.count) data bytes; an extended Lc carries at most 65 535")
        }
        var out = [cla, ins, p1, p2]
        if !data.isEmpty { out += [0x00, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data }
        if let le {
            guard (1...CommandAPDU.maxExtendedLe).contains(le) else { throw APDUError(.tooLong, "Le \(le) outside 1…65 536") }
            // With no Lc the extended Le takes the 00 marker itself (case 2E).
            if data.isEmpty { out.append(0x00) }
            out += [UInt8(truncatingIfNeeded: le >> 8), UInt8(truncatingIfNeeded: le)]
        }
        return out
    }

    /// Encodes, trapping on values this type's own callers never build (data > 255, bad Le).
    public var bytes: [UInt8] {
        do { return try encoded() } catch { preconditionFailure("\(error)") }
    }

    public init<C: Collection>(parsing bytes: C) throws(APDUError) where C.Element == UInt8 {
        let b = Array(bytes)
        guard b.count >= 4 else { throw APDUError(.truncated, "\(b.count) byte(s); a command has at least CLA INS P1 P2") }
        self.init(cla: b[0], ins: b[1], p1: b[2], p2: b[3])
        switch b.count {
        case 4:
            return
        case 5:
            le = b[4] == 0 ? 256 : Int(b[4])
        case 6 where b[4] == 0:
            throw APDUError(.extendedLength, "byte 4 is 00 followed by one byte: neither a short Lc (01-FF) nor an extended field (00 Lc1 Lc2 or 00 Le1 Le2)")
        case 7 where b[4] == 0:
            // Case 2E: 00 Le1 Le2.
            extendedLength = true
            le = Self.extendedLe(b[5], b[6])
        default:
            let lc = Int(b[4])
            if lc == 0 {
                // Case 3E or 4E: 00 Lc1 Lc2 data [Le1 Le2].
                extendedLength = true
                let n = Int(b[5]) << 8 | Int(b[6])
                guard n > 0 else { throw APDUError(.extendedLength, "extended Lc 00 00 00 followed by \(b.count - 7) byte(s): an extended Lc is 0001-FFFF") }
                if b.count == 7 + n {
                    data = Array(b[7...])
                } else if b.count == 9 + n {
                    data = Array(b[7..<7 + n])
                    le = Self.extendedLe(b[7 + n], b[8 + n])
                } else {
                    throw APDUError(.badLength, "extended Lc 00 \(Hex.encode([b[5], b[6]])) (\(n)) but \(b.count - 7) byte(s) follow")
                }
                return
            }
            if b.count == 5 + lc {
                data = Array(b[5...])
            } else if b.count == 6 + lc {
                data = Array(b[5..<5 + lc])
                le = b[5 + lc] == 0 ? 256 : Int(b[5 + lc])
            } else {
                throw APDUError(.badLength, "Lc \(lc) but \(b.count - 5) byte(s) follow")
            }
        }
    }

    /// An extended Le: `0000` means 65 536.
    private static func extendedLe(_ hi: UInt8, _ lo: UInt8) -> Int {
        let v = Int(hi) << 8 | Int(lo)
        return v == 0 ? CommandAPDU.maxExtendedLe : v
    }
}

/// A response APDU: data ‖ SW1 SW2.
public struct ResponseAPDU: Equatable, Hashable, Sendable {
    public var data: [UInt8]
    public var status: StatusWord

    public init(data: [UInt8] = [], status: StatusWord = .success) {
        self.data = data
        self.status = status
    }

    public var bytes: [UInt8] { data + status.bytes }

    public init<C: Collection>(parsing bytes: C) throws(APDUError) where C.Element == UInt8 {
        let b = Array(bytes)
        guard b.count >= 2 else { throw APDUError(.truncated, "\(b.count) byte(s); a response has at least SW1 SW2") }
        guard b.count <= 258 else { throw APDUError(.tooLong, "\(b.count - 2) data bytes; a short response carries at most 256") }
        data = Array(b[..<(b.count - 2)])
        status = StatusWord(b[b.count - 2], b[b.count - 1])
    }
}
