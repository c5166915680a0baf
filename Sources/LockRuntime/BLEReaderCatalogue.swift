import AccessProtocol
import BLE
import ByteCore
import Codecs
import Conformance
import Foundation

/// One phone connection driven step by step, as the certification tool's `UserDevice` does in the
/// ble_reader cases: scan and connect, GATT (read the SPSM and versions, write a version), open
/// the channel, then frames one at a time, answered by a LockBench credential.
final class BLEPhoneStep {
    let session: BLEPhoneSession
    var channel: L2CAPChannel?
    let credential: CredentialSession
    /// Every wait on the reader under test is bounded by this.
    let timeout: TimeInterval

    init(_ phone: BLEPhone, credential: CredentialSession, versionWrite: [UInt8] = AliroBLE.protocolVersion, timeout: TimeInterval) throws {
        session = try phone.connectToLock()
        self.credential = credential
        self.timeout = timeout
        do { try session.discover(versionWrite: versionWrite) } catch {
            session.disconnect()
            throw CheckStop(.fail("BLE GAP connection establishment failure: \(error)"))
        }
    }

    /// Opens the channel and sends "initiate access protocol" (the tool's `transaction_initiation`).
    func initiate() throws {
        let ch = try session.openChannel()
        channel = ch
        if let m = credential.openingMessage(transportVersions: session.transportVersions) { try ch.send(m.encoded()) }
    }

    /// The reader's next frame within `timeout` (`wait_for_message`).
    func next() throws -> AliroFrame {
        guard let channel else { throw CheckStop(.fail("no channel")) }
        do { return try AliroFrame(parsing: try channel.receive(timeout: timeout)) } catch {
            throw CheckStop(.fail("the reader sent nothing within \(Int(timeout)) s: \(error)"))
        }
    }

    /// The next frame, which must be a command APDU (`wait_for_command`): refused naming the frame.
    func command(_ step: String) throws -> CommandAPDU {
        let f = try next()
        guard f.type == AliroFrame.Kind.apdu, f.id == AliroFrame.ID.command else {
            throw CheckStop(.fail("\(step): expected a command APDU (00 00), the reader sent \(f)", actual: f.encoded()))
        }
        do { return try CommandAPDU(parsing: f.payload) } catch {
            throw CheckStop(.fail("\(step): the command does not parse: \(error)", actual: f.payload))
        }
    }

    /// Answers `command` with the credential (`00 01`).
    @discardableResult
    func answer(_ command: CommandAPDU) throws -> [UInt8] {
        guard let bytes = try? command.encoded() else {
            throw CheckStop(.fail("\(Names.command(command)) carries \(command.data.count) data bytes: more than a short APDU holds"))
        }
        let r = credential.respond(to: bytes)
        try channel?.send(AliroFrame.response(r).encoded())
        return r
    }

    func close() {
        channel?.close()
        session.disconnect()
    }
}

/// The official ble_reader cases that need neither UWB, RKE nor reader certificates, each with
/// its pass criteria (docs/conformance-ble.md): `conformance reader --ble` runs these. LockBench
/// plays the phone (central) through a `BLEPhonePresenter`.
public enum BLEReaderCatalogue {
    static let tool = "aliro-certification-tool test_collections/aliro/ble_reader"

    static func phone(_ reader: ReaderUnderTest) throws -> BLEPhone {
        guard let p = reader.presenter as? BLEPhonePresenter else { throw CheckStop(.notApplicable("a BLE case: run with --ble")) }
        return p.phone
    }

    /// A fresh credential of the user's with the BLE interface byte.
    static func credential(_ reader: ReaderUnderTest, faults: CredentialFaults = []) -> CredentialSession {
        reader.phone(faults: faults, tweak: { $0.interface = .ble; $0.strictLe = true }).session
    }

    /// The AUTH0 checks of `rd_ble_auth0_*` step 4 (and step 3: standard or FAST), nil when met.
    static func auth0Rule(_ c: CommandAPDU, fast: Bool, policy: UInt8, vendor: Bool) -> Verdict? {
        guard c.ins == Instruction.auth0 else {
            return .fail("the reader's first command after the initiate is \(Names.command(c)), not AUTH0 (UnexpectedCommandError)", expected: [0x80, 0x80], actual: [c.cla, c.ins])
        }
        let a: Auth0Command
        do { a = try Auth0Command(parsing: c.data) } catch { return .fail("AUTH0 data does not parse: \(error)", actual: c.data) }
        if (a.flags & Auth0Command.flagFast != 0) != fast {
            return .fail(fast ? "either standard transaction was requested or handling auth0 failed" : "either fast transaction was requested or handling auth0 failed",
                         expected: [fast ? 0x01 : 0x00], actual: [a.flags])
        }
        guard a.policy == policy else {
            return .fail(policy == 0x03 ? "Force user authentication not requested" : "User device authentication not requested", expected: [policy], actual: [a.policy])
        }
        guard a.version == ProtocolVersion.v1_0 else { return .fail("Expedited phase protocol version mismatch", expected: [0x01, 0x00], actual: a.version.bigEndianBytes) }
        if vendor != (a.vendorExtension != nil) {
            return .fail(vendor ? "Vendor specific extensions are not present" : "Vendor specific extensions are present", actual: a.vendorExtension)
        }
        return nil
    }

    /// The policy byte of an AUTH0, for applicability.
    static func policy(_ c: CommandAPDU) -> UInt8? { (try? Auth0Command(parsing: c.data))?.policy }

    /// One connection: initiate, the first command, its answer; then the link is dropped
    /// (`transaction_termination`).
    static func firstAUTH0(_ reader: ReaderUnderTest) throws -> CommandAPDU {
        let step = try BLEPhoneStep(try phone(reader), credential: credential(reader), timeout: reader.timeout)
        defer { step.close() }
        try step.initiate()
        let c = try step.command("step 2, AUTH0")
        if c.ins == Instruction.auth0 { try step.answer(c) }
        return c
    }

    /// Steps 1–12 of `rd_ble_auth0_11` / `rd_ble_fsttxn_10`: a standard transaction ending with
    /// the completed notification, which must open under BleSKReader. nil when met.
    static func standardPart(_ step: BLEPhoneStep, checkAUTH0: (CommandAPDU) -> Verdict?) throws -> Verdict? {
        try step.initiate()
        let auth0 = try step.command("step 2, AUTH0")
        if let a = try? Auth0Command(parsing: auth0.data), a.flags & Auth0Command.flagFast != 0 {
            return .notApplicable("the reader asks for FAST in the first transaction (it holds a Kpersistent for this phone): the case starts with a reader prepared for a standard transaction")
        }
        if let v = checkAUTH0(auth0) { return v }
        try step.answer(auth0)
        var c = try step.command("step 4, AUTH1")
        if c.ins == Instruction.loadCert { try step.answer(c); c = try step.command("step 6, AUTH1") }
        guard c.ins == Instruction.auth1 else { return .fail("step 4: expected AUTH1 or LOAD CERT, got \(Names.command(c))", actual: [c.cla, c.ins]) }
        try step.answer(c)
        let e = try step.command("step 8, EXCHANGE")
        guard e.ins == Instruction.exchange else { return .fail("step 8: expected EXCHANGE, got \(Names.command(e))", actual: [e.cla, e.ins]) }
        try step.answer(e)
        if let s = step.credential.lastReaderStatus {
            return .fail("EXCHANGE command has reader status tag while using BLE (97 \(Hex.encode(s.bigEndianBytes)))", actual: s.bigEndianBytes)
        }
        let f = try step.next()
        if f.type == AliroFrame.Kind.apdu, let c = try? CommandAPDU(parsing: f.payload), c.ins == Instruction.envelope {
            return .notApplicable("the reader steps up (ENVELOPE) for the phone's documents before completing: the case presumes a reader that already knows the credential")
        }
        guard f.type == AliroFrame.Kind.notification, f.id == AliroFrame.ID.completed else {
            return .fail("step 12: expected the access protocol completed notification (02 03), got \(f)", actual: f.encoded())
        }
        _ = step.credential.received(f)
        guard step.credential.lastCompleted != nil else {
            return .fail("step 12: the completed notification does not open under BleSKReader: \(step.credential.lastCompletedProblem ?? "")", actual: f.payload)
        }
        return nil
    }

    public static let all: [ReaderCheck] = [
        ReaderCheck("ble.rdr.auth0-1.0", official: "RD-BLE-AUTH0-1.0", section: "ble.md", title: "after the initiate, AUTH0 first: standard, policy 01, version 0100, no B1") { reader, _ in
            let c = try firstAUTH0(reader)
            if policy(c) == 0x03 { return .notApplicable("the reader is configured for policy 03: RD-BLE-AUTH0-2.0 applies instead") }
            return auth0Rule(c, fast: false, policy: 0x01, vendor: false) ?? .pass("AUTH0 \(Hex.encode(c.bytes.prefix(16)))…")
        },
        ReaderCheck("ble.rdr.auth0-2.0", official: "RD-BLE-AUTH0-2.0", section: "ble.md", title: "a reader configured for force user authentication: AUTH0 first, standard, policy 03") { reader, _ in
            let c = try firstAUTH0(reader)
            if c.ins == Instruction.auth0, policy(c) == 0x01 {
                return .notApplicable("the reader sends policy 01: the case applies to a reader configured for 03 (LockBench's lock: \"protocol\": {\"policy\": 3})")
            }
            return auth0Rule(c, fast: false, policy: 0x03, vendor: false) ?? .pass("AUTH0 policy 03")
        },
        ReaderCheck("ble.rdr.auth0-3.1", official: "RD-BLE-AUTH0-3.1", section: "ble.md", title: "a reader configured with a vendor extension: AUTH0 first carries B1") { reader, _ in
            let c = try firstAUTH0(reader)
            if c.ins == Instruction.auth0, (try? Auth0Command(parsing: c.data))?.vendorExtension == nil {
                return .notApplicable("the reader sends no vendor extension B1: the case applies to a reader configured to send one")
            }
            return auth0Rule(c, fast: false, policy: 0x01, vendor: true) ?? .pass("AUTH0 with B1")
        },
        ReaderCheck("ble.rdr.stdtxn-1.0", official: "RD-BLE-STDTXN-1.0", section: "ble.md", title: "GATT: FFF2 lists version 0100; the version write 0100 01 xx is accepted") { reader, _ in
            let session = try phone(reader).connectToLock()
            defer { session.disconnect() }
            do { try session.discover(versionWrite: [0x01, 0x00, 0x01, 0x00]) } catch {
                return .fail("GATT: \(error)")
            }
            guard session.lockVersions.contains(0x0100) else {
                return .fail("Version 0x0100 not found", actual: session.lockVersions.flatMap(\.bigEndianBytes))
            }
            return .pass("SPSM 0x\(String(format: "%04X", session.psm)), versions \(session.lockVersions.map { String(format: "%04X", $0) })")
        },
        ReaderCheck("ble.rdr.stdtxn-2.0", official: "RD-BLE-STDTXN-2.0", section: "ble.md", title: "a standard transaction: initiate, AUTH0 first, [LOAD CERT], AUTH1, EXCHANGE without 97") { reader, _ in
            let step = try BLEPhoneStep(try phone(reader), credential: credential(reader), timeout: reader.timeout)
            defer { step.close() }
            try step.initiate()
            let a = try step.command("step 2, AUTH0")
            guard a.ins == Instruction.auth0 else { return .fail("step 2: expected AUTH0, got \(Names.command(a))", actual: [a.cla, a.ins]) }
            try step.answer(a)
            var c = try step.command("step 4, AUTH1")
            if c.ins == Instruction.loadCert { try step.answer(c); c = try step.command("step 6, AUTH1") }
            guard c.ins == Instruction.auth1 else { return .fail("expected AUTH1, got \(Names.command(c))", actual: [c.cla, c.ins]) }
            try step.answer(c)
            let e = try step.command("step 8, EXCHANGE")
            guard e.ins == Instruction.exchange else { return .fail("expected EXCHANGE, got \(Names.command(e))", actual: [e.cla, e.ins]) }
            let r = try step.answer(e)
            if let s = step.credential.lastReaderStatus { return .fail("EXCHANGE command has reader status tag while using BLE", actual: s.bigEndianBytes) }
            guard r.suffix(2) == [0x90, 0x00] else { return .fail("the EXCHANGE did not open under the expedited keys", actual: Array(r.suffix(2))) }
            return .pass("AUTH0, AUTH1, EXCHANGE (no 97)")
        },
        ReaderCheck("ble.rdr.auth0-1.1", official: "RD-BLE-AUTH0-1.1", transactions: 2, section: "ble.md",
                    title: "standard (completed under BleSK), then AUTH0 FAST: policy 01, version 0100, no B1") { reader, _ in
            let cred = credential(reader)
            do {
                let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
                defer { step.close() }
                if let v = try standardPart(step, checkAUTH0: { auth0Rule($0, fast: false, policy: 0x01, vendor: false) }) { return v }
            }
            let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
            defer { step.close() }
            try step.initiate()
            let c = try step.command("step 14, AUTH0")
            return auth0Rule(c, fast: true, policy: 0x01, vendor: false) ?? .pass("standard then FAST AUTH0")
        },
        ReaderCheck("ble.rdr.fsttxn-1.0", official: "RD-BLE-FSTTXN-1.0", transactions: 2, section: "ble.md",
                    title: "standard (completed under BleSK), then FAST: AUTH0, then completed (no EXCHANGE)") { reader, _ in
            let cred = credential(reader)
            do {
                let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
                defer { step.close() }
                if let v = try standardPart(step, checkAUTH0: { $0.ins == Instruction.auth0 ? nil : auth0Rule($0, fast: false, policy: 0x01, vendor: false) }) { return v }
            }
            let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
            defer { step.close() }
            try step.initiate()
            let c = try step.command("step 14, AUTH0")
            guard c.ins == Instruction.auth0, let a = try? Auth0Command(parsing: c.data), a.flags & Auth0Command.flagFast != 0 else {
                return .fail("either standard transaction was requested or handling auth0 failed", actual: Array(c.bytes.prefix(6)))
            }
            try step.answer(c)
            let f = try step.next()
            guard f.type == AliroFrame.Kind.notification, f.id == AliroFrame.ID.completed else {
                return .fail("Received unexpected command while waiting for BLE message: \(f)", actual: f.encoded())
            }
            _ = cred.received(f)
            guard cred.lastCompleted != nil else { return .fail("the completed notification does not open under BleSKReader: \(cred.lastCompletedProblem ?? "")", actual: f.payload) }
            return .pass("FAST: AUTH0, completed \(cred.lastCompleted.map { Hex.encode($0.encoded()) } ?? "")")
        },
        ReaderCheck("ble.rdr.neg-failed-l2cap", official: "BLERKE_RDR_NEG_FAILED_L2CAP", section: "ble.md",
                    title: "after the version write 01FF 01 03, the LE credit-based connection is refused or the link dropped") { reader, _ in
            let step = try BLEPhoneStep(try phone(reader), credential: credential(reader), versionWrite: [0x01, 0xFF, 0x01, 0x03], timeout: reader.timeout)
            defer { step.close() }
            do {
                let ch = try step.session.openChannel()
                ch.close()
                return .fail("Wrong BLE_UWB protocol version was accepted for L2CAP connection.")
            } catch {
                if let r = step.session.connection.lastChannelRefusal { return .pass("refused, result 0x\(String(format: "%04X", r))") }
                return .pass("L2CAP connection establishment failed as expected: \(error)")
            }
        },
        ReaderCheck("ble.rdr.neg-failed-spsm-l2cap", official: "BLERKE_RDR_NEG_FAILED_SPSM_L2CAP", section: "ble.md",
                    title: "a credit-based connection on SPSM + 1 (low byte) is refused with result 0002 LE_PSM not supported") { reader, _ in
            try wrongSPSM(reader)
        },
        ReaderCheck("ble.rdr.uwb-neg-failed-spsm-l2cap", official: "BLEUWB_RDR_NEG_FAILED_SPSM_L2CAP", section: "ble.md",
                    title: "as BLERKE_RDR_NEG_FAILED_SPSM_L2CAP (the tool's UWB chip is only initialised)") { reader, _ in
            try wrongSPSM(reader)
        },
        ReaderCheck("ble.rdr.advertisement-format", official: "BLEUWB_RDR_ADVERTISEMENT_FORMAT", section: "ble.md",
                    title: "31-byte advertisement with FFF2 service data, version 0, the reader's group id; GATT and the channel open") { reader, _ in
            let step = try BLEPhoneStep(try phone(reader), credential: credential(reader), timeout: reader.timeout)
            defer { step.close() }
            let ad = step.session.advertisingData
            guard ad.count == 31 else { return .fail("the advertising data is \(ad.count) bytes, not 31", actual: ad) }
            guard let a = AliroAdvertisement(advertisingData: ad) else { return .fail("no FFF2 service data", actual: ad) }
            guard a.advertisingVersion == AliroAdvertisement.version else { return .fail("Invalid BLE advertisement version", expected: [0x00], actual: [a.advertisingVersion]) }
            let groups = reader.base.trustedReaders.map { Array($0.groupID.prefix(8)) }
            guard groups.isEmpty || groups.contains(a.groupID) else { return .fail("the advertised group id is not the trusted reader's", actual: a.groupID) }
            do { try step.initiate() } catch { return .fail("the channel did not open: \(error)") }
            return .pass("service data byte 0 = \(Hex.encode([a.firstByte])), channel open")
        },
        ReaderCheck("ble.rdr.neg-timeout-before-auth0", official: "BLEUWB_RDR_NEG_TIMEOUT_BEFORE_AUTH0", section: "ble.md",
                    title: "AUTH0 left unanswered for 3 s: the reader sends the Event 02 00 with GENERAL_ERROR") { reader, _ in
            let step = try BLEPhoneStep(try phone(reader), credential: credential(reader), timeout: max(reader.timeout, 10))
            defer { step.close() }
            try step.initiate()
            let c = try step.command("step 3, AUTH0")
            guard c.ins == Instruction.auth0 else { return .fail("step 3: expected AUTH0, got \(Names.command(c))", actual: [c.cla, c.ins]) }
            Thread.sleep(forTimeInterval: 3)
            let f = try step.next()
            guard f.type == AliroFrame.Kind.notification, f.id == AliroFrame.ID.event,
                  let e = try? BLEEvent(parsing: f.payload), case .generalError = e else {
                return .fail("expected the Event notification with GENERAL_ERROR (02 00 … 01 01 xx), got \(f)", expected: [0x02, 0x00, 0x00, 0x03, 0x01, 0x01], actual: f.encoded())
            }
            return .pass("\(f)")
        },
        ReaderCheck("ble.rdr.control-flow-rdr-info-tag", official: "BLEUWB_RDR_CONTROL_FLOW_RDR_INFO_TAG", section: "ble.md",
                    title: "AUTH0 answered with the key under a wrong tag: the reader ends the link") { reader, _ in
            let step = try BLEPhoneStep(try phone(reader), credential: credential(reader, faults: .auth0WrongTag), timeout: reader.timeout)
            defer { step.close() }
            try step.initiate()
            // Answer every command until the reader disconnects (the case's pass), bounded.
            while true {
                let f: AliroFrame
                do { f = try AliroFrame(parsing: try step.channel!.receive(timeout: reader.timeout)) } catch let e as BLEError where e.code == .channelClosed {
                    return .pass("the reader ended the link")
                } catch {
                    return .fail("the reader kept the link open for \(Int(reader.timeout)) s after the wrong-tag AUTH0 answer")
                }
                if f.type == AliroFrame.Kind.apdu, let c = try? CommandAPDU(parsing: f.payload) { try step.answer(c) }
            }
        },
    ]

    /// `blerke_rdr_neg_failed_spsm_l2cap`: the read SPSM with its low byte + 1 (FF → 80).
    static func wrongSPSM(_ reader: ReaderUnderTest) throws -> Verdict {
        let step = try BLEPhoneStep(try phone(reader), credential: credential(reader), versionWrite: [0x01, 0x00, 0x01, 0x03], timeout: reader.timeout)
        defer { step.close() }
        let psm = step.session.psm
        let wrong = psm & 0xFF < 0xFF ? psm + 1 : (psm & 0xFF00) | 0x80
        do {
            let ch = try step.session.openChannel(psm: wrong)
            ch.close()
            return .fail("Wrong SPSM value was accepted by Reader for L2CAP connection (0x\(String(format: "%04X", wrong)))")
        } catch {
            guard let r = step.session.connection.lastChannelRefusal else { return .fail("Wrong SPSM value was accepted by Reader for L2CAP connection: \(error)") }
            return r == SignalingCommand.Result.psmNotSupported ? .pass("SPSM 0x\(String(format: "%04X", wrong)) refused 0x0002")
                : .fail("SPSM 0x\(String(format: "%04X", wrong)) refused with another result", expected: [0x00, 0x02], actual: r.bigEndianBytes)
        }
    }
}
