import AccessProtocol
import BLE
import ByteCore
import Codecs
import Conformance
import Crypto
import Foundation
import OfflineUnlock

public typealias BLECredentialCheck = ConformanceCheck<BLEPhoneUnderTest, Void>

/// The official ble_user_device cases that need neither UWB nor a tool that works as stored (the
/// reader-certificate ones once the phone is provisioned for them, the RKE ones with `--rke`), each
/// with its pass criteria (docs/conformance-ble.md): `conformance
/// credential --ble` runs these. LockBench plays the tool's reader — the lock advertising, the
/// phone under test connecting once per transaction (`BLEPhoneUnderTest`, `BLELockStep`).
public enum BLECredentialCatalogue {
    /// `ALIRO_BLE_UWB_INVALID_VERSION`, the only version BLEUWB_UD_NEG_FAILED_L2CAP lists.
    static let invalidVersion: UInt16 = 0x01FF
    /// The driver timeout of BLEUWB_UD_NEG_FAILED_L2CAP (`driver.timeout = 5`), per operation.
    static let driverTimeout: TimeInterval = 5
    /// How long BLERKE_UD_NEG_FAILED_L2CAP waits for the phone to leave a version-1 advertisement:
    /// the tool waits without end; the reference phone leaves at once (LockBench's bound).
    static let leaveWithin: TimeInterval = 3

    /// `ud_ble_auth0_10` / `_30`: initiate, standard AUTH0 (policy 01): 9000, a valid `86`, no `9D`.
    static func standardAUTH0(_ phone: BLEPhoneUnderTest, _ id: String) throws -> CheckVerdict {
        let s = try phone.connection(id)
        defer { s.close() }
        try s.initiate()
        let (answer, _) = try s.auth0()
        guard answer.cryptogram == nil else { return .fail("9D cryptogram in a standard AUTH0 answer", actual: answer.cryptogram) }
        return .pass("initiate, then AUTH0 answered 86 41 on P-256")
    }

    /// Initiate, AUTH0 standard, AUTH1, EXCHANGE without `97` (answered `00 02 00 00`), the
    /// completed notification under BleSKReader.
    static func standardTransaction(_ phone: BLEPhoneUnderTest, _ id: String, policy: UInt8 = 0x01, ursk: Bool = false,
                                    completed: (AccessProtocolCompleted.UnsolicitedReporting, AccessProtocolCompleted.ReaderStatusInformation)) throws {
        let s = try phone.connection(id)
        defer { s.close() }
        try s.initiate()
        try s.auth0(policy: policy)
        try s.auth1()
        try s.exchange(ursk: ursk, step: "EXCHANGE")
        try s.completed(completed.0, completed.1)
    }

    /// The FAST cryptogram opened with the run's Kpersistent; nil plaintext when it does not open.
    static func openCryptogram(_ s: BLELockStep, _ answer: Auth0Response) throws -> [UInt8] {
        guard let cryptogram = answer.cryptogram else { throw CheckStop(.fail("User did not send cryptogram during a fast transaction (no 9D)")) }
        guard let cached = s.phone.persistent, let plain = s.probe.openFast(cached) else {
            throw CheckStop(.fail("CryptogramNotFound: the cryptogram does not open with the Kpersistent of the standard transaction", actual: cryptogram))
        }
        return plain
    }

    /// `ud_ble_auth0_20` / `_21`: the opened cryptogram carries the signaling bitmap and both
    /// signed timestamps.
    static func threeFields(_ plain: [UInt8]) -> CheckVerdict? {
        guard let fields = try? TLV.parseFields(plain) else { return .fail("the cryptogram plaintext is not BER-TLV", actual: plain) }
        for (tag, name) in [(Tag.Auth1.signaling, "signaling bitmap"), (Tag.Auth1.credentialTimestamp, "credential signed timestamp"),
                            (Tag.Auth1.revocationTimestamp, "revocation signed timestamp")] where fields.first(tag) == nil {
            return .fail("the cryptogram has no \(name) (\(String(tag, radix: 16, uppercase: true)))", actual: plain)
        }
        return nil
    }

    /// The certificate a `ud_ble_auth1_*` case sends: the valid one, bytes 5 and 6 set to FF, or
    /// one whose signature does not verify under the issuer key.
    enum CaseCertificate { case valid, corrupted, invalid }

    /// The ids of the `ud_ble_auth1_*` checks (not applicable without `--reader-certificates`).
    public static let certificateCases: Set<String> = Set((1...4).flatMap { n in (0...2).map { "ble.ud.auth1-\(n).\($0)" } })

    /// `ud_ble_auth1_*` (docs/conformance-ble.md): as the tool's reader — key `0457a25c…`, group
    /// `00113344…AA`, the phone trusting the issuer key `043928f3…` for it — initiate, standard AUTH0
    /// (01), the certificate by LOAD CERT (answered 9000) or in AUTH1 `90`, AUTH1 asking for the key
    /// slot or the public key. A valid certificate: AUTH1 opens (with `4E` or `5A`); another: AUTH1
    /// answered an error status word.
    static func certificateCase(_ phone: BLEPhoneUnderTest, _ id: String, loadCert: Bool, keySlot: Bool, _ which: CaseCertificate) throws -> CheckVerdict {
        guard phone.readerCertificates else { return .notApplicable(OfficialReaderCertificates.prompt) }
        let bytes: [UInt8]
        switch which {
        case .valid: bytes = OfficialReaderCertificates.certificate.compressed()
        case .corrupted: bytes = OfficialReaderCertificates.incorrectFormat(OfficialReaderCertificates.certificate)
        case .invalid: bytes = OfficialReaderCertificates.incorrectSignatureCertificate.compressed()
        }
        let s = try phone.connection(id, as: OfficialReaderCertificates.identity(OfficialReaderCertificates.olderReaderKey),
                                     groupKey: OfficialReaderCertificates.issuerPublicKey)
        defer { s.close() }
        try s.initiate()
        try s.auth0()
        if loadCert { try ReaderProbe.expect(try s.probe.loadCert(bytes), .success, "LOAD CERT") }
        let inAUTH1 = loadCert ? nil : bytes
        guard which == .valid else {
            let r = try s.probe.sendAuth1(returnPublicKey: !keySlot, certificate: inAUTH1)
            return r.status == .success ? .fail("AUTH1 after \(which == .corrupted ? "a corrupted" : "an unverifiable") certificate was answered 9000 (No error status returned)")
                : .pass("AUTH1 refused \(r.status) (\(Names.status(r.status)))")
        }
        let tlvs = try s.probe.auth1(returnPublicKey: !keySlot, certificate: inAUTH1)
        if keySlot {
            guard tlvs.first(Tag.Auth1.credentialKey) == nil, tlvs.first(Tag.Auth1.keySlot)?.value.count == 8 else {
                return .fail("AUTH1 flags 00 asked for the key slot: the answer must carry 4E (8 bytes) and no 5A")
            }
        }
        return .pass("certificate \(loadCert ? "by LOAD CERT" : "in AUTH1 90") accepted; AUTH1 answered \(keySlot ? "4E" : "5A")")
    }

    /// `B2`, the response vendor extension the AUTH0 cases refuse.
    static func hasVendorExtension(_ r: ResponseAPDU) -> Bool { (try? TLV.parseFields(r.data))?.first(0xB2) != nil }

    /// `02 06`, as `wait_for_initiate_access_protocol_notification(rke=True)` waits for.
    static let rkeInitiate = [ChannelMessage.Notification.initiateAccessProtocolRKE]

    /// The blerke_ud cases: the phone runs its RKE flow (`ble phone --rke secure|unsecure`),
    /// `conformance credential --ble --rke` runs these (the other checks want the plain initiate).
    public static let remoteKeylessEntry: [BLECredentialCheck] = [
        BLECredentialCheck("ble.ud.rke-expedited-standard-phase", official: "BLERKE_UD_EXPEDITED_STANDARD_PHASE", section: "ble.md",
                           title: "RKE initiate 02 06; AUTH0 (policy 02), AUTH1; completed 00 02 20 00 under BleSK; the phone's RKE request 02 04 under BleSK; Reader Status Changed") { phone, _ in
            try rkeOpening(phone, "ble.ud.rke-expedited-standard-phase") { s in
                let request = try s.rkeRequest()
                try s.statusChanged(request.action == .secure ? .secured : .unsecured)
                return .pass("RKE request \(request.action.name) under BleSK; Reader Status Changed sent")
            }
        },
        BLECredentialCheck("ble.ud.rke-info-tag", official: "BLERKE_UD_INFO_TAG", section: "ble.md",
                           title: "RKE initiate 02 06; AUTH0 (policy 02), AUTH1; completed under BleSK (no info-tag check in the stored case)") { phone, _ in
            try rkeOpening(phone, "ble.ud.rke-info-tag")
        },
        BLECredentialCheck("ble.ud.rke-ud-descriptor-tag", official: "BLERKE_UD_UD_DESCRIPTOR_TAG", section: "ble.md",
                           title: "as BLERKE_UD_INFO_TAG (no descriptor check in the stored case)") { phone, _ in
            try rkeOpening(phone, "ble.ud.rke-ud-descriptor-tag")
        },
        BLECredentialCheck("ble.ud.rke-stepup-phase", official: "BLERKE_UD_STEPUP_PHASE", section: "ble.md",
                           title: "initiate; AUTH0 (02), AUTH1; completed; ENVELOPE for aliro-a: each document's issuer signature verifies and binds the AUTH1 key; EXCHANGE on the step-up keys; completed; RKE request; Reader Status Changed") { phone, _ in
            guard !phone.issuerKeys.isEmpty else {
                return .notApplicable("the official case verifies each document's issuer signature: give the issuer's public key (--issuer PEM)")
            }
            let s = try phone.connection("ble.ud.rke-stepup-phase")
            defer { s.close() }
            // `transaction_initiation()` without rke: the stored reader takes 02 05; a phone in its RKE flow sends 02 06.
            try s.initiate(ids: [ChannelMessage.Notification.initiateAccessProtocol, ChannelMessage.Notification.initiateAccessProtocolRKE])
            try s.auth0(policy: AuthenticationPolicy.userDeviceSecureAction.rawValue)
            try s.auth1()
            try s.completed(.sendToEachConnected, .secured)
            let request = DeviceRequest(requests: [DeviceRequest.Items(docType: DocType.access, namespaces: [DocType.access: [phone.elementID: false]])])
            let (r, response) = try s.probe.envelope(request)
            try ReaderProbe.expect(r, .success, "ENVELOPE")
            guard let response else { return .fail("Failed to parse the CBOR (no DeviceResponse)") }
            guard let credentialKey = s.probe.credentialKey else { return .fail("no 5A credential key to bind the documents to") }
            let trust: TrustStore
            do { trust = try TrustStore(issuerPublicKeys: phone.issuerKeys) } catch { return .fail("an --issuer key is not a P-256 point: \(error)") }
            for bytes in response.documents {
                do {
                    let doc = try IssuedDocument(parsing: bytes)
                    try doc.verify(trust: trust)
                    if let key = doc.deviceKey, key != credentialKey { return .fail("Document signature is invalid: the MSO binds another device key", actual: Array(key.prefix(9))) }
                } catch {
                    return .fail("Document signature is invalid: \(error)")
                }
            }
            let reply = try s.probe.exchange(ExchangeCommandPlaintext(readerStatus: nil).encoded(), on: .stepUp)
            guard reply == ExchangeResponsePlaintext.success else {
                return .fail("EXCHANGE on the step-up keys: the answer plaintext is not 00 02 00 00", expected: ExchangeResponsePlaintext.success, actual: reply)
            }
            try s.completed(.sendToEachConnected, .secured)
            let rke = try s.rkeRequest()
            try s.statusChanged(rke.action == .secure ? .secured : .unsecured)
            return .pass("\(response.documents.count) document(s) verified; EXCHANGE on the step-up keys; RKE request \(rke.action.name); Reader Status Changed sent")
        },
    ]

    /// The blerke_ud opening: `transaction_initiation(rke=True)`, AUTH0 policy 02 and AUTH1
    /// (`expedited_transaction_standard`), the completed notification; `then` runs what the case
    /// does after it (`blerke_ud_info_tag` / `_ud_descriptor_tag` stop there).
    static func rkeOpening(_ phone: BLEPhoneUnderTest, _ id: String,
                           then: (BLELockStep) throws -> CheckVerdict = { _ in .pass("RKE initiate 02 06, AUTH0 02, AUTH1, completed") }) throws -> CheckVerdict {
        let s = try phone.connection(id)
        defer { s.close() }
        try s.initiate(ids: rkeInitiate)
        try s.auth0(policy: AuthenticationPolicy.userDeviceSecureAction.rawValue)
        try s.auth1()
        try s.completed(.sendToEachConnected, .secured)
        return try then(s)
    }

    public static let all: [BLECredentialCheck] = [
        BLECredentialCheck("ble.ud.stdtxn-1.0", official: "UD-BLE-STDTXN-1.0", section: "ble.md",
                           title: "GATT: the phone writes version 0100 to BD4B9502") { phone, _ in
            let since = phone.reconfigure { _ in }
            let link = try phone.newLink(since: since)
            defer { phone.end(link) }
            let deadline = Date(timeIntervalSinceNow: phone.timeout)
            while phone.lock.writtenVersion(of: link) == nil && link.isOpen && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            guard let written = phone.lock.writtenVersion(of: link) else {
                return .fail("the phone wrote no version to BD4B9502 within \(Int(phone.timeout)) s")
            }
            guard AliroBLE.writtenVersion(written) == 0x0100 else { return .fail("Invalid AC BLE UWB Protocol Version", expected: [0x01, 0x00], actual: written) }
            return .pass("wrote \(Hex.encode(written))")
        },
        BLECredentialCheck("ble.ud.stdtxn-2.0", official: "UD-BLE-STDTXN-2.0", section: "ble.md",
                           title: "initiate first; AUTH0, AUTH1, EXCHANGE without 97 answered 00 02 00 00; completed 00 02 00 00 under BleSK") { phone, _ in
            try standardTransaction(phone, "ble.ud.stdtxn-2.0", completed: (.doNotSend, .secured))
            return .pass("initiate, AUTH0, AUTH1, EXCHANGE, completed")
        },
        BLECredentialCheck("ble.ud.auth0-1.0", official: "UD-BLE-AUTH0-1.0", section: "ble.md",
                           title: "after the initiate, a standard AUTH0 (policy 01) is answered 9000 with a valid 86, no 9D") { phone, _ in
            try standardAUTH0(phone, "ble.ud.auth0-1.0")
        },
        BLECredentialCheck("ble.ud.auth0-3.0", official: "UD-BLE-AUTH0-3.0", section: "ble.md",
                           title: "as UD-BLE-AUTH0-1.0 (identical as stored)") { phone, _ in
            try standardAUTH0(phone, "ble.ud.auth0-3.0")
        },
        BLECredentialCheck("ble.ud.auth0-1.1", official: "UD-BLE-AUTH0-1.1", section: "ble.md",
                           title: "AUTH0 naming version 0001 is answered an error status word") { phone, _ in
            let s = try phone.connection("ble.ud.auth0-1.1")
            defer { s.close() }
            try s.initiate()
            let r = try s.probe.send(s.probe.makeAuth0(fast: false, versionOverride: CredentialCatalogue.unlistedVersion))
            return r.status == .success ? .fail("Invalid protocol version send, but it was accepted", actual: r.status.bytes)
                : .pass("refused \(r.status) (\(Names.status(r.status)))")
        },
        BLECredentialCheck("ble.ud.auth0-1.2", official: "UD-BLE-AUTH0-1.2", section: "ble.md",
                           title: "three AUTH0s with an invalid reader ePubK (02 prefix, 04 + 33-byte X, 04 + 33-byte Y) each refused; SELECT between them answered an FCI") { phone, _ in
            let s = try phone.connection("ble.ud.auth0-1.2")
            defer { s.close() }
            try s.initiate()
            let point = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
            let x = Array(point[1..<33]), y = Array(point[33..<65])
            let keys: [(String, [UInt8])] = [("02 ‖ X ‖ Y", [0x02] + x + y), ("04 ‖ 33-byte X", [0x04, 0x00] + x), ("04 ‖ 33-byte Y", [0x04, 0x00] + y)]
            for (i, (name, key)) in keys.enumerated() {
                if i > 0 { try s.probe.select() }
                let cmd = Auth0Command(flags: 0, policy: 0x01, version: s.probe.version, readerEphemeralKey: key,
                                       transactionID: Array(SystemRandom().bytes(16)), readerID: phone.identity.readerID)
                let r = try s.probe.send(cmd.apdu)
                if r.status == .success { return .fail("AUTH0 with an invalid reader ePubK (\(name)) was answered 9000", actual: key) }
            }
            return .pass("the three invalid keys refused; SELECT answered between them")
        },
        BLECredentialCheck("ble.ud.auth0-1.3", official: "UD-BLE-AUTH0-1.3", section: "ble.md",
                           title: "two standard AUTH0s in one session: the second 86 differs from the first; no B2") { phone, _ in
            let s = try phone.connection("ble.ud.auth0-1.3")
            defer { s.close() }
            try s.initiate()
            let (first, r1) = try s.auth0()
            let (second, r2) = try s.auth0()
            if hasVendorExtension(r1) || hasVendorExtension(r2) { return .fail("Vendor specific extensions are present (B2)") }
            guard first.deviceEphemeralKey != second.deviceEphemeralKey else {
                return .fail("Public key already used in previous command", actual: second.deviceEphemeralKey)
            }
            return .pass("two AUTH0 answers, two device keys")
        },
        BLECredentialCheck("ble.ud.auth0-2.0", official: "UD-BLE-AUTH0-2.0", transactions: 2, section: "ble.md",
                           title: "after a standard transaction, a FAST AUTH0 straight after the initiate: the cryptogram opens with 5E, 91, 92; no B2") { phone, _ in
            // As stored the case needs a Kpersistent its fresh reader cannot have: the standard
            // transaction first gives LockBench's reader one.
            try standardTransaction(phone, "ble.ud.auth0-2.0", completed: (.sendToEachConnected, .secured))
            let s = try phone.connection("ble.ud.auth0-2.0")
            defer { s.close() }
            try s.initiate()
            let (answer, r) = try s.auth0(fast: true)
            let plain = try openCryptogram(s, answer)
            if let v = threeFields(plain) { return v }
            if hasVendorExtension(r) { return .fail("Vendor specific extensions are present (B2)") }
            return .pass("the cryptogram opens with 5E, 91, 92")
        },
        BLECredentialCheck("ble.ud.auth0-2.1", official: "UD-BLE-AUTH0-2.1", transactions: 2, section: "ble.md",
                           title: "standard (completed under BleSK), then FAST: the cryptogram opens with 5E, 91, 92; SELECT; a second FAST AUTH0's cryptogram differs") { phone, _ in
            try standardTransaction(phone, "ble.ud.auth0-2.1", completed: (.sendToEachConnected, .secured))
            let s = try phone.connection("ble.ud.auth0-2.1")
            defer { s.close() }
            try s.initiate()
            guard let initiated = s.probe.fci else { return .fail("no initiate") }
            let (first, _) = try s.auth0(fast: true)
            if let v = threeFields(try openCryptogram(s, first)) { return v }
            let selected = try s.probe.select()
            // The second cryptogram is bound to the initiate's A5 or, since the SELECT, to its FCI.
            let r = try s.probe.send(s.probe.makeAuth0(fast: true))
            try ReaderProbe.expect(r, .success, "the second FAST AUTH0")
            var second: [UInt8]?
            var answer: Auth0Response?
            for fci in [initiated, selected] {
                s.probe.bind(fci)
                let a = try s.probe.acceptAuth0(r)
                answer = a
                if a.cryptogram != nil, let cached = phone.persistent, let plain = s.probe.openFast(cached) { second = plain; break }
            }
            guard let c2 = answer?.cryptogram else { return .fail("User did not send cryptogram in the second FAST AUTH0") }
            guard let plain = second else { return .fail("CryptogramNotFound: the second cryptogram does not open with the Kpersistent", actual: c2) }
            if let v = threeFields(plain) { return v }
            if c2 == first.cryptogram { return .fail("Received cryptogram same as previous response", actual: c2) }
            return .pass("both cryptograms open with 5E, 91, 92 and differ")
        },
        BLECredentialCheck("ble.ud.fsttxn-1.0", official: "UD-BLE-FSTTXN-1.0", transactions: 2, section: "ble.md",
                           title: "standard (completed under BleSK), then FAST: the cryptogram opens; EXCHANGE with 98; completed") { phone, _ in
            try standardTransaction(phone, "ble.ud.fsttxn-1.0", completed: (.sendToEachConnected, .secured))
            let s = try phone.connection("ble.ud.fsttxn-1.0")
            defer { s.close() }
            try s.initiate()
            let (answer, _) = try s.auth0(fast: true)
            _ = try openCryptogram(s, answer)
            try s.exchange(ursk: true, step: "FAST EXCHANGE with 98")
            try s.completed(.sendToEachConnected, .secured)
            return .pass("standard, then FAST: AUTH0 (cryptogram opens), EXCHANGE with 98, completed")
        },
        BLECredentialCheck("ble.ud.neg-failed-l2cap", official: "BLERKE_UD_NEG_FAILED_L2CAP", section: "ble.md",
                           title: "a lock advertising version 1: the phone connects, then disconnects") { phone, _ in
            let since = phone.reconfigure { $0.setAdvertisementVersion(1) }
            defer { phone.lock.setAdvertisementVersion(AliroAdvertisement.version) }
            let link = try phone.newLink(since: since)
            guard link.waitUntilDisconnected(timeout: leaveWithin) else {
                phone.end(link)
                return .fail("the phone stayed connected \(Int(leaveWithin)) s to a lock advertising version 1" + (phone.lock.hasPendingChannel(from: link) ? " and opened the channel" : ""))
            }
            return .pass("connected, then disconnected (reason 0x\(String(link.disconnectReason ?? 0, radix: 16)))")
        },
        BLECredentialCheck("ble.ud.uwb-neg-failed-l2cap", official: "BLEUWB_UD_NEG_FAILED_L2CAP", section: "ble.md",
                           title: "a lock listing only version 01FF: the phone does not open the channel within 5 s of its write (or writes nothing, or leaves)") { phone, _ in
            let since = phone.reconfigure { $0.listVersions([invalidVersion]) }
            defer { phone.lock.listVersions(AliroBLE.supportedVersions) }
            let link = try phone.newLink(since: since)
            defer { phone.end(link) }
            var deadline = Date(timeIntervalSinceNow: driverTimeout)
            while phone.lock.writtenVersion(of: link) == nil {
                guard link.isOpen, Date() < deadline else { return .pass("L2CAP connection establishment failed as expected: no version written") }
                Thread.sleep(forTimeInterval: 0.02)
            }
            deadline = Date(timeIntervalSinceNow: driverTimeout)
            while !phone.lock.hasPendingChannel(from: link) {
                guard link.isOpen, Date() < deadline else { return .pass("L2CAP connection establishment failed as expected") }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return .fail("Wrong BLE_UWB protocol version was accepted for L2CAP connection.")
        },
        BLECredentialCheck("ble.ud.neg-timeout-before-auth0", official: "BLEUWB_UD_NEG_TIMEOUT_BEFORE_AUTH0", section: "ble.md",
                           title: "no AUTH0 after the initiate: the phone disconnects without sending anything") { phone, _ in
            let s = try phone.connection("ble.ud.neg-timeout-before-auth0")
            defer { s.close() }
            try s.initiate()
            Thread.sleep(forTimeInterval: 3)
            do {
                if let f = try s.nextFrame(within: phone.timeout) { return .fail("Unexpected BLE message received: \(f)", actual: f.encoded()) }
            } catch {
                return .fail("the phone kept the link open \(Int(phone.timeout) + 3) s after the initiate without AUTH0")
            }
            return .pass("User Device disconnected as expected due to timeout waiting for Auth0")
        },
        BLECredentialCheck("ble.ud.timeout-extension", official: "BLEUWB_UD_TIMEOUT_EXTENSION", section: "ble.md",
                           title: "Busy 1 s after the initiate, AUTH0 1 s later: answered; AUTH1, EXCHANGE with 98, completed") { phone, _ in
            let s = try phone.connection("ble.ud.timeout-extension")
            defer { s.close() }
            try s.initiate()
            Thread.sleep(forTimeInterval: 1)
            try s.card.sendMessage(AliroFrame.busy)
            Thread.sleep(forTimeInterval: 1)
            do { try s.auth0() } catch let e as BLEError {
                return .fail("the phone did not wait for AUTH0 sent 2 s after its initiate, a Busy event between: \(e.reason)")
            }
            try s.auth1()
            try s.exchange(ursk: true, step: "EXCHANGE with 98")
            try s.completed(.sendToEachConnected, .secured)
            return .pass("AUTH0 answered 2 s after the initiate (Busy between); AUTH1, EXCHANGE, completed")
        },
        BLECredentialCheck("ble.ud.auth1-1.0", official: "UD-BLE-AUTH1-1.0", section: "ble.md, protocol.md §6a",
                           title: "AUTH1 with 90 (key slot); valid certificate: AUTH1 opens") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-1.0", loadCert: false, keySlot: true, .valid)
        },
        BLECredentialCheck("ble.ud.auth1-1.1", official: "UD-BLE-AUTH1-1.1", section: "ble.md, protocol.md §6a",
                           title: "AUTH1 with 90 (key slot); certificate with bytes 5, 6 FF: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-1.1", loadCert: false, keySlot: true, .corrupted)
        },
        BLECredentialCheck("ble.ud.auth1-1.2", official: "UD-BLE-AUTH1-1.2", section: "ble.md, protocol.md §6a",
                           title: "AUTH1 with 90 (key slot); certificate that does not verify: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-1.2", loadCert: false, keySlot: true, .invalid)
        },
        BLECredentialCheck("ble.ud.auth1-2.0", official: "UD-BLE-AUTH1-2.0", section: "ble.md, protocol.md §6a",
                           title: "LOAD CERT, then AUTH1 (key slot); valid certificate: AUTH1 opens") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-2.0", loadCert: true, keySlot: true, .valid)
        },
        BLECredentialCheck("ble.ud.auth1-2.1", official: "UD-BLE-AUTH1-2.1", section: "ble.md, protocol.md §6a",
                           title: "LOAD CERT, then AUTH1 (key slot); certificate with bytes 5, 6 FF: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-2.1", loadCert: true, keySlot: true, .corrupted)
        },
        BLECredentialCheck("ble.ud.auth1-2.2", official: "UD-BLE-AUTH1-2.2", section: "ble.md, protocol.md §6a",
                           title: "LOAD CERT, then AUTH1 (key slot); certificate that does not verify: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-2.2", loadCert: true, keySlot: true, .invalid)
        },
        BLECredentialCheck("ble.ud.auth1-3.0", official: "UD-BLE-AUTH1-3.0", section: "ble.md, protocol.md §6a",
                           title: "AUTH1 with 90 (public key); valid certificate: AUTH1 opens") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-3.0", loadCert: false, keySlot: false, .valid)
        },
        BLECredentialCheck("ble.ud.auth1-3.1", official: "UD-BLE-AUTH1-3.1", section: "ble.md, protocol.md §6a",
                           title: "AUTH1 with 90 (public key); certificate with bytes 5, 6 FF: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-3.1", loadCert: false, keySlot: false, .corrupted)
        },
        BLECredentialCheck("ble.ud.auth1-3.2", official: "UD-BLE-AUTH1-3.2", section: "ble.md, protocol.md §6a",
                           title: "AUTH1 with 90 (public key); certificate that does not verify: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-3.2", loadCert: false, keySlot: false, .invalid)
        },
        BLECredentialCheck("ble.ud.auth1-4.0", official: "UD-BLE-AUTH1-4.0", section: "ble.md, protocol.md §6a",
                           title: "LOAD CERT, then AUTH1 (public key); valid certificate: AUTH1 opens") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-4.0", loadCert: true, keySlot: false, .valid)
        },
        BLECredentialCheck("ble.ud.auth1-4.1", official: "UD-BLE-AUTH1-4.1", section: "ble.md, protocol.md §6a",
                           title: "LOAD CERT, then AUTH1 (public key); certificate with bytes 5, 6 FF: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-4.1", loadCert: true, keySlot: false, .corrupted)
        },
        BLECredentialCheck("ble.ud.auth1-4.2", official: "UD-BLE-AUTH1-4.2", section: "ble.md, protocol.md §6a",
                           title: "LOAD CERT, then AUTH1 (public key); certificate that does not verify: AUTH1 refused") { phone, _ in
            try certificateCase(phone, "ble.ud.auth1-4.2", loadCert: true, keySlot: false, .invalid)
        },
        BLECredentialCheck("ble.ud.ud-descriptor-tag", official: "BLEUWB_UD_UD_DESCRIPTOR_TAG", section: "ble.md",
                           title: "AUTH0 (policy 02), AUTH1, EXCHANGE, EXCHANGE with 98, completed") { phone, _ in
            let s = try phone.connection("ble.ud.ud-descriptor-tag")
            defer { s.close() }
            try s.initiate()
            try s.auth0(policy: 0x02)
            try s.auth1()
            try s.exchange(step: "the first EXCHANGE")
            try s.exchange(ursk: true, step: "the second EXCHANGE (98)")
            try s.completed(.sendToEachConnected, .secured)
            return .pass("AUTH0 02, AUTH1, two EXCHANGEs, completed")
        },
    ]
}
