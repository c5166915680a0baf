import AccessProtocol
import BLE
import ByteCore
import Codecs
import Conformance
import PhoneRadios
import Foundation
import OfflineUnlock

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

    /// After AUTH0 was answered: answers [LOAD CERT] and AUTH1, and returns the EXCHANGE that must
    /// follow, unanswered (steps 4–8 of the standard ble_reader transaction).
    func authenticateUntilExchange() throws -> CommandAPDU {
        var c = try command("step 4, AUTH1")
        if c.ins == Instruction.loadCert { try answer(c); c = try command("step 6, AUTH1") }
        guard c.ins == Instruction.auth1 else {
            throw CheckStop(.fail("step 4: expected AUTH1 or LOAD CERT, got \(Names.command(c))", actual: [c.cla, c.ins]))
        }
        try answer(c)
        let e = try command("step 8, EXCHANGE")
        guard e.ins == Instruction.exchange else {
            throw CheckStop(.fail("step 8: expected EXCHANGE, got \(Names.command(e))", actual: [e.cla, e.ins]))
        }
        return e
    }

    func close() {
        channel?.close()
        session.disconnect()
    }
}

/// The official ble_reader cases that need neither UWB nor reader certificates (RKE included), each with
/// its pass criteria (docs/conformance-ble.md): `conformance reader --ble` runs these. LockBench
/// plays the phone (central) through a `BLEPhoneRadio`.
public enum BLEReaderCatalogue {
    static let tool = "aliro-certification-tool test_collections/aliro/ble_reader"

    static func phone(_ reader: ReaderUnderTest) throws -> BLEPhone {
        guard let p = reader.radio as? BLEPhoneRadio else { throw CheckStop(.notApplicable("a BLE case: run with --ble")) }
        return p.phone
    }

    /// A fresh credential of the user's with the BLE interface byte.
    static func credential(_ reader: ReaderUnderTest, faults: CredentialFaults = []) -> CredentialSession {
        reader.phone(faults: faults, tweak: { $0.interface = .ble; $0.strictLe = true }).session
    }

    /// The AUTH0 checks of `rd_ble_auth0_*` step 4 (and step 3: standard or FAST), nil when met.
    static func auth0Rule(_ c: CommandAPDU, fast: Bool, policy: UInt8, vendor: Bool) -> CheckVerdict? {
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
    static func standardPart(_ step: BLEPhoneStep, checkAUTH0: (CommandAPDU) -> CheckVerdict?) throws -> CheckVerdict? {
        try step.initiate()
        let auth0 = try step.command("step 2, AUTH0")
        if let a = try? Auth0Command(parsing: auth0.data), a.flags & Auth0Command.flagFast != 0 {
            return .notApplicable("the reader asks for FAST in the first transaction (it holds a Kpersistent for this phone): the case starts with a reader prepared for a standard transaction")
        }
        if let v = checkAUTH0(auth0) { return v }
        try step.answer(auth0)
        try step.answer(try step.authenticateUntilExchange())
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

    /// The two-transaction cases: a standard transaction (`standardPart`), then a new connection
    /// whose first command (step 14) goes to `then` with the connection and credential still open.
    static func afterStandard(_ reader: ReaderUnderTest, checkAUTH0: (CommandAPDU) -> CheckVerdict?,
                              then: (BLEPhoneStep, CredentialSession, CommandAPDU) throws -> CheckVerdict) throws -> CheckVerdict {
        let cred = credential(reader)
        do {
            let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
            defer { step.close() }
            if let v = try standardPart(step, checkAUTH0: checkAUTH0) { return v }
        }
        let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
        defer { step.close() }
        try step.initiate()
        return try then(step, cred, try step.command("step 14, AUTH0"))
    }

    public static let all: [ReaderCheck] = plain + remoteKeylessEntry

    static let plain: [ReaderCheck] = [
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
            let r = try step.answer(try step.authenticateUntilExchange())
            if let s = step.credential.lastReaderStatus { return .fail("EXCHANGE command has reader status tag while using BLE", actual: s.bigEndianBytes) }
            guard r.suffix(2) == [0x90, 0x00] else { return .fail("the EXCHANGE did not open under the expedited keys", actual: Array(r.suffix(2))) }
            return .pass("AUTH0, AUTH1, EXCHANGE (no 97)")
        },
        ReaderCheck("ble.rdr.auth0-1.1", official: "RD-BLE-AUTH0-1.1", transactions: 2, section: "ble.md",
                    title: "standard (completed under BleSK), then AUTH0 FAST: policy 01, version 0100, no B1") { reader, _ in
            try afterStandard(reader, checkAUTH0: { auth0Rule($0, fast: false, policy: 0x01, vendor: false) }) { _, _, c in
                auth0Rule(c, fast: true, policy: 0x01, vendor: false) ?? .pass("standard then FAST AUTH0")
            }
        },
        ReaderCheck("ble.rdr.fsttxn-1.0", official: "RD-BLE-FSTTXN-1.0", transactions: 2, section: "ble.md",
                    title: "standard (completed under BleSK), then FAST: AUTH0, then completed (no EXCHANGE)") { reader, _ in
            try afterStandard(reader, checkAUTH0: { $0.ins == Instruction.auth0 ? nil : auth0Rule($0, fast: false, policy: 0x01, vendor: false) }) { step, cred, c in
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
            }
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

    // MARK: Remote keyless entry (blerke_rdr_neg_fast, _secure, _unsecure, _stepup_phase)

    /// One RKE transaction as the tool's `UserDevice` runs it: initiate `02 06`, AUTH0 first, AUTH1
    /// (`wait_for_command(expected_command=INS.AUTH1)`: a FAST AUTH0 the reader ends without AUTH1
    /// fails here), EXCHANGE — with `stepUp`, commands until ENVELOPE, which must ask for the
    /// phone's access document — the completed notification opening under BleSKReader, the RKE
    /// request with `action`, and the reader's next message, which must be "reader status
    /// changed" opening under BleSKReader: its status.
    static func remoteTransaction(_ reader: ReaderUnderTest, _ cred: CredentialSession, action: RemoteAction,
                                  stepUp: Bool = false) throws -> AccessProtocolCompleted.ReaderStatusInformation {
        cred.remoteAction = action
        let step = try BLEPhoneStep(try phone(reader), credential: cred, timeout: reader.timeout)
        defer { step.close() }
        try step.initiate()
        let a = try step.command("step 2, AUTH0")
        guard a.ins == Instruction.auth0 else { throw CheckStop(.fail("step 2: expected AUTH0, got \(Names.command(a.bytes))", actual: Array(a.bytes.prefix(2)))) }
        try step.answer(a)
        let f1 = try step.next()
        guard f1.type == AliroFrame.Kind.apdu, f1.id == AliroFrame.ID.command, let c = try? CommandAPDU(parsing: f1.payload), c.ins == Instruction.auth1 else {
            let fast = (try? Auth0Command(parsing: a.data)).map { $0.flags & Auth0Command.flagFast != 0 } ?? false
            throw CheckStop(.fail("step 4: expected AUTH1, the reader sent \(f1)" + (fast ? " after a FAST AUTH0 (an RKE transaction must be standard)" : ""), actual: f1.encoded()))
        }
        try step.answer(c)
        var sawEnvelope = false
        var e = try step.command("step 6, EXCHANGE")
        if stepUp {
            // `blerke_rdr_stepup_phase` step 1: EXCHANGE answered, ENVELOPE ends the loop, any other INS fails.
            while e.ins == Instruction.exchange {
                try step.answer(e)
                let f = try step.next()
                if f.type == AliroFrame.Kind.notification, f.id == AliroFrame.ID.completed {
                    throw CheckStop(.notApplicable("the reader completed without stepping up: it already holds this credential's documents (the case presumes a reader that asks for them)"))
                }
                guard f.type == AliroFrame.Kind.apdu, f.id == AliroFrame.ID.command, let next = try? CommandAPDU(parsing: f.payload) else {
                    throw CheckStop(.fail("step 1: expected a command, the reader sent \(f)", actual: f.encoded()))
                }
                e = next
            }
            guard e.ins == Instruction.envelope else { throw CheckStop(.fail("Unexpected instruction \(Names.command(e.bytes)) before ENVELOPE", actual: Array(e.bytes.prefix(2)))) }
            var r = try step.answer(e)
            // A long answer goes out in parts: 61xx, then the reader's GET RESPONSE.
            while r.count >= 2, r[r.count - 2] == 0x61 {
                let g = try step.command("GET RESPONSE after ENVELOPE")
                guard g.ins == Instruction.getResponse else {
                    throw CheckStop(.fail("Unexpected instruction \(Names.command(g.bytes)) while the ENVELOPE answer is pending (61xx)", actual: Array(g.bytes.prefix(2))))
                }
                r = try step.answer(g)
            }
            guard r.suffix(2) == [0x90, 0x00], let request = cred.lastDeviceRequest else {
                throw CheckStop(.fail("the ENVELOPE's DeviceRequest did not open or parse", actual: Array(r.suffix(2))))
            }
            let wanted = Set(cred.configuration.accessDocuments.compactMap { try? IssuedDocument(parsing: $0) }.flatMap { $0.items.map(\.elementIdentifier) })
            let named = Set(request.requests.compactMap { $0.namespaces[DocType.access] }.flatMap(\.keys))
            if !wanted.isEmpty, named.isDisjoint(with: wanted) {
                throw CheckStop(.fail("Reader did not request Element ID \(wanted.sorted().joined(separator: ", ")) in namespace aliro-a (it named \(named.isEmpty ? "none" : named.sorted().joined(separator: ", ")))"))
            }
            sawEnvelope = true
        } else {
            guard e.ins == Instruction.exchange else { throw CheckStop(.fail("step 6: expected EXCHANGE, got \(Names.command(e.bytes))", actual: Array(e.bytes.prefix(2)))) }
            try step.answer(e)
        }
        if let s = cred.lastReaderStatus { throw CheckStop(.fail("EXCHANGE command has reader status tag while using BLE", actual: s.bigEndianBytes)) }
        let done = try step.next()
        if !sawEnvelope, done.type == AliroFrame.Kind.apdu, let c = try? CommandAPDU(parsing: done.payload), c.ins == Instruction.envelope {
            throw CheckStop(.notApplicable("the reader steps up (ENVELOPE) for the phone's documents before completing: the case presumes a reader that already knows the credential (BLERKE_RDR_STEPUP_PHASE covers the step-up)"))
        }
        guard done.type == AliroFrame.Kind.notification, done.id == AliroFrame.ID.completed else {
            throw CheckStop(.fail("step 8: expected the access protocol completed notification (02 03), got \(done)", actual: done.encoded()))
        }
        _ = cred.received(done)
        guard cred.lastCompleted != nil else {
            throw CheckStop(.fail("step 8: the completed notification does not open under BleSKReader: \(cred.lastCompletedProblem ?? "")", actual: done.payload))
        }
        guard let request = cred.remoteRequest() else { throw CheckStop(.fail("step 9: no BleSK to seal the RKE request under")) }
        try step.channel?.send(request.encoded())
        let changed = try step.next()
        guard changed.type == AliroFrame.Kind.notification, changed.id == ChannelMessage.Notification.readerStatusChanged else {
            throw CheckStop(.fail("step 10: expected Reader Status Changed (02 02) after the RKE request, the reader sent \(changed)", actual: changed.encoded()))
        }
        _ = cred.received(changed)
        guard let status = cred.lastStatusChanged?.readerStatus else {
            throw CheckStop(.fail("step 10: Reader Status Changed does not open under BleSKReader or parse: \(cred.lastStatusChangedProblem ?? "")", actual: changed.payload))
        }
        return status
    }

    /// The pass rule of step 10: the status is one of `accepted`.
    static func statusRule(_ status: AccessProtocolCompleted.ReaderStatusInformation, _ accepted: [AccessProtocolCompleted.ReaderStatusInformation]) -> CheckVerdict {
        accepted.contains(status) ? .pass("Reader Status Changed: \(status.name) (\(Hex.encode([status.rawValue])))")
            : .fail("Wrong reader status information: \(status.name), the case accepts \(accepted.map(\.name).joined(separator: ", "))",
                    expected: accepted.map(\.rawValue), actual: [status.rawValue])
    }

    /// The RKE checks, in the order a lock meeting the phone for the first time passes them: the
    /// step-up first (it learns the documents), then the transactions that presume it knows them.
    static let remoteKeylessEntry: [ReaderCheck] = [
        ReaderCheck("ble.rdr.rke-stepup-phase", official: "BLERKE_RDR_STEPUP_PHASE", section: "ble.md",
                    title: "RKE initiate 02 06, AUTH0, AUTH1, EXCHANGE, ENVELOPE (no step-up SELECT) asking for aliro-a, completed; RKE unsecure: Reader Status Changed unsecured") { reader, _ in
            statusRule(try remoteTransaction(reader, credential(reader), action: .unsecure, stepUp: true), [.unsecured])
        },
        ReaderCheck("ble.rdr.rke-secure", official: "BLERKE_RDR_SECURE", section: "ble.md",
                    title: "RKE initiate 02 06, AUTH0, AUTH1, EXCHANGE, completed; RKE secure (00): Reader Status Changed jammed, started secure or unknown") { reader, _ in
            statusRule(try remoteTransaction(reader, credential(reader), action: .secure), [.jammed, .startedSecure, .unknown])
        },
        ReaderCheck("ble.rdr.rke-unsecure", official: "BLERKE_RDR_UNSECURE", section: "ble.md",
                    title: "RKE initiate 02 06, AUTH0, AUTH1, EXCHANGE, completed; RKE unsecure (01): Reader Status Changed unsecured") { reader, _ in
            statusRule(try remoteTransaction(reader, credential(reader), action: .unsecure), [.unsecured])
        },
        ReaderCheck("ble.rdr.rke-neg-fast", official: "BLERKE_RDR_NEG_FAST", transactions: 10, section: "ble.md",
                    title: "ten RKE transactions by one phone: each standard (AUTH1 after AUTH0, never FAST), RKE unsecure: unsecured, jammed, started unsecure or unknown") { reader, _ in
            let cred = credential(reader)
            for round in 1...10 {
                var verdict: CheckVerdict
                do { verdict = statusRule(try remoteTransaction(reader, cred, action: .unsecure), [.unsecured, .jammed, .startedUnsecure, .unknown]) } catch let stop as CheckStop {
                    verdict = stop.verdict
                }
                guard verdict.status == .pass else {
                    verdict.reason = "round \(round): \(verdict.reason)"
                    return verdict
                }
            }
            return .pass("ten standard RKE transactions, each answered with Reader Status Changed")
        },
    ]

    /// `blerke_rdr_neg_failed_spsm_l2cap`: the read SPSM with its low byte + 1 (FF → 80).
    static func wrongSPSM(_ reader: ReaderUnderTest) throws -> CheckVerdict {
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
