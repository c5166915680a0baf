import AccessProtocol
import ByteCore
import Codecs

/// The protocol's words for bytes: command names, status words, TLV tags per message, reader
/// statuses (docs/protocol.md §2, §10, §11; ALIRO-FACTS).
public enum Names {
    /// What a command APDU is, from CLA/INS (and the AID of a SELECT).
    public static func command(_ bytes: [UInt8]) -> String {
        guard bytes.count >= 4 else { return "short APDU" }
        let chained = bytes[0] & 0x10 != 0 && bytes[1] != 0xA4
        let base: String
        switch bytes[1] {
        case Instruction.select:
            if bytes.count >= 14, Array(bytes[5..<14]) == AccessAID.stepUp { base = "SELECT step-up" }
            else if bytes.count >= 14, Array(bytes[5..<14]) == AccessAID.expedited { base = "SELECT" }
            else { base = "SELECT (other AID)" }
        case Instruction.auth0: base = "AUTH0"
        case Instruction.auth1: base = "AUTH1"
        case Instruction.loadCert: base = "LOAD CERT"
        case Instruction.exchange: base = "EXCHANGE"
        case Instruction.controlFlow: base = "CONTROL FLOW"
        case Instruction.envelope: base = "ENVELOPE"
        case Instruction.getResponse: base = "GET RESPONSE"
        default: base = "INS \(Hex.encode([bytes[1]]).uppercased())"
        }
        return chained ? base + " (chained part)" : base
    }

    /// `command(_:)` for a whole command (a chain assembled may hold more than one APDU's data).
    public static func command(_ c: CommandAPDU) -> String {
        command([c.cla, c.ins, c.p1, c.p2, UInt8(truncatingIfNeeded: min(c.data.count, 255))] + c.data.prefix(9))
    }

    /// ISO 7816-4 words for a status word, with LockBench's meaning where it has one (§11).
    public static func status(_ sw: StatusWord) -> String {
        switch sw.rawValue {
        case 0x9000: return "normal processing"
        case 0x6400: return "execution error"
        case 0x6700: return "wrong length"
        case 0x6701: return "wrong length: Le missing or unexpected"
        case 0x6883: return "last command of the chain expected"
        case 0x6884: return "command chaining not supported"
        case 0x6982: return "security status not satisfied"
        case 0x6985: return "conditions of use not satisfied (out of sequence)"
        case 0x6988: return "incorrect secure messaging data objects"
        case 0x6A80: return "incorrect data"
        case 0x6A82: return "file or application not found"
        case 0x6A86: return "incorrect P1-P2"
        case 0x6A88: return "referenced data not found"
        case 0x6D00: return "instruction not supported"
        case 0x6E00: return "class not supported"
        case 0x6F00: return "no precise diagnosis"
        default:
            if sw.sw1 == 0x61 { return "\(sw.sw2 == 0 ? "256 or more" : String(sw.sw2)) bytes remaining (GET RESPONSE)" }
            if sw.sw1 == 0x6C { return "wrong Le: exact length \(sw.sw2)" }
            return "unknown status"
        }
    }

    /// Reader status of EXCHANGE `97` (ALIRO-FACTS).
    public static func readerStatus(_ s: UInt16) -> String {
        switch s {
        case 0x0001: return "key not found"
        case 0x0002: return "key expired"
        case 0x0003: return "key not trusted"
        case 0x0004: return "invalid signature"
        case 0x0006: return "invalid data format"
        case 0x0007: return "invalid data content"
        case 0x0020: return "status word error"
        case 0x0021: return "no key slot in response"
        case 0x0022: return "no public key in response"
        case 0x0023: return "no signature present"
        case 0x0025: return "access rights"
        case 0x0026: return "hardware"
        case 0x0100: return "secured"
        case 0x0101: return "unsecured (opened)"
        case 0x0102: return "jammed"
        case 0x0180...0x0182: return "transitional/unknown"
        default: return "unknown reader status"
        }
    }

    /// A failure reader status (below the lock-state range 0100…).
    public static func isFailureStatus(_ s: UInt16) -> Bool { s < 0x0100 }

    /// Where a TLV sits, for naming its tag.
    public enum Context {
        case selectResponse, auth0Command, auth0Response, auth1Command, auth1Plaintext, exchangePlaintext,
             controlFlow, envelope, cryptogramPlaintext
    }

    public static func tag(_ tag: UInt32, in context: Context) -> String {
        switch (context, tag) {
        case (.selectResponse, 0x6F): return "FCI template"
        case (.selectResponse, 0x84): return "AID"
        case (.selectResponse, 0xA5): return "proprietary data"
        case (.selectResponse, 0x80): return "type"
        case (.selectResponse, 0x5C): return "supported versions"
        case (.selectResponse, 0x7F66): return "extended length info (maxCmd, maxRsp)"
        case (.selectResponse, 0x02): return "integer"
        case (.selectResponse, 0xB3): return "vendor data"
        case (.auth0Command, 0x41), (.auth1Command, 0x41): return "flags"
        case (.auth0Command, 0x42): return "policy"
        case (.auth0Command, 0x5C): return "chosen version"
        case (.auth0Command, 0x87): return "reader ephemeral public key"
        case (.auth0Command, 0x4C): return "transaction id"
        case (.auth0Command, 0x4D): return "reader id (group ‖ sub)"
        case (.auth0Command, 0xB1): return "vendor extension"
        case (.auth0Response, 0x86): return "device ephemeral public key"
        case (.auth0Response, 0x9D): return "FAST cryptogram"
        case (.auth1Command, 0x9E): return "reader signature"
        case (.auth1Command, 0x90): return "reader certificate"
        case (.auth1Plaintext, 0x5A): return "credential public key"
        case (.auth1Plaintext, 0x4E): return "key slot"
        case (.auth1Plaintext, 0x9E): return "device signature"
        case (.auth1Plaintext, 0x4B): return "mailbox"
        case (.auth1Plaintext, 0x5E), (.cryptogramPlaintext, 0x5E): return "signaling bitmap"
        case (.auth1Plaintext, 0x91), (.cryptogramPlaintext, 0x91): return "credential signed timestamp"
        case (.auth1Plaintext, 0x92), (.cryptogramPlaintext, 0x92): return "revocation signed timestamp"
        case (.exchangePlaintext, 0xBA): return "mailbox operations"
        case (.exchangePlaintext, 0x8C): return "atomic session"
        case (.exchangePlaintext, 0x87): return "mailbox read (offset ‖ length)"
        case (.exchangePlaintext, 0x8A): return "mailbox write (offset ‖ data)"
        case (.exchangePlaintext, 0x95): return "mailbox set (offset ‖ length ‖ value)"
        case (.exchangePlaintext, 0xAE): return "notify"
        case (.exchangePlaintext, 0x82): return "reader error"
        case (.exchangePlaintext, 0xB5): return "reader info"
        case (.exchangePlaintext, 0x80): return "vendor/product"
        case (.exchangePlaintext, 0x81): return "firmware"
        case (.exchangePlaintext, 0x97): return "reader status"
        case (.exchangePlaintext, 0x98): return "URSK request"
        case (.controlFlow, 0x41): return "S1"
        case (.controlFlow, 0x42): return "S2"
        case (.controlFlow, 0x43): return "info"
        case (.controlFlow, 0xB5): return "reader info"
        case (.envelope, 0x53): return "envelope data"
        default: return "unknown tag"
        }
    }

    /// Set bits of the signaling bitmap, named.
    public static func signaling(_ bitmap: UInt16) -> String {
        let names = [0: "access document", 1: "revocation document", 2: "step-up SELECT required", 3: "mailbox has data",
                     4: "mailbox readable", 5: "mailbox writable", 6: "issuer notify", 7: "app notify",
                     9: "document updatable", 10: "mailbox in step-up", 11: "step-up notify", 12: "step-up update document"]
        let set = (0..<16).filter { bitmap & (1 << $0) != 0 }.map { names[$0] ?? "bit \($0)" }
        return set.isEmpty ? "none" : set.joined(separator: ", ")
    }
}
