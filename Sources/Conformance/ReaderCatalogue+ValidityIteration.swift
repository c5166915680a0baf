import AccessProtocol
import ByteCore
import Crypto
import Foundation
import OfflineUnlock

/// The Aliro 0.9.4 §7.2.3 cases: the reader remembers each issuer's highest access-document
/// validity iteration (its AccessIteration) and refuses a document 8 or more below it, or below
/// the one it holds for the same credential, and forgets a refused credential's Kpersistent.
///
/// The cases' iterations are small fixed numbers (1, 9, 3, 1; 9, 0; 1, 9, 1, 10). A lock keeps
/// its AccessIteration for good, so a second run against the same lock would meet the first's
/// and refuse tap 1. Each check therefore adds a base to the case's numbers: 64 per second of
/// the wall clock (later runs start higher) plus 16 per check (the checks of one run stay apart).
/// The differences, which are all the rule looks at, are the case's. A lock that has met these
/// checks holds an AccessIteration near 64 × the Unix time for the site issuer: its real
/// documents then need iterations above it (docs/conformance.md, "Validity iterations").
extension ReaderCatalogue {
    static func iterationBase(slot: Int) -> Int { Int(Date().timeIntervalSince1970) * 64 + slot * 16 }

    /// A phone with `key` holding one access document of validity iteration `iteration`, signed
    /// at `signed`, minted by the site issuer for the lock's group (the iteration cases' phones).
    static func iterationPhone(_ reader: ReaderUnderTest, issuer: P256.Signing.PrivateKey, group: [UInt8], key: P256.Signing.PrivateKey,
                               iteration: Int, signed: Date, stepUpSelect: StepUpSelectPolicy? = nil,
                               fastCache: FastCache? = nil) throws -> ObservingPhone {
        let document = try DocumentDefect.none.mint(credentialKey: key.publicBytes, readerGroup: group, issuer: issuer,
                                                    now: signed, validityIteration: iteration)
        return reader.phone(fastCache: fastCache) {
            $0.signingKey = key
            $0.accessDocuments = [document]
            $0.revocationDocuments = []
            if let stepUpSelect { $0.stepUpSelect = stepUpSelect }
            $0 = $0.withDocumentTimestamps()
        }
    }

    static let validityIterationChecks: [ReaderCheck] = [
        ReaderCheck("rdr.neg.stepup.validity-iteration", official: "NFC_RDR_NEG_STEPUP_AD_VALIDITY_ITERATION", transactions: 4, section: "§9",
                    title: "three phones, four taps, each stepped up: iterations 1 (A), 9 (B), 3 (A) granted; 1 (C) refused, 8 below the issuer's AccessIteration 9 (Aliro 0.9.4 §7.2.3)") { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock documents of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            guard let group = reader.base.trustedReaders.first?.groupID else { return .fail("the phone trusts no reader") }
            let base = iterationBase(slot: 0)
            let a = P256.Signing.PrivateKey(), b = P256.Signing.PrivateKey(), c = P256.Signing.PrivateKey()
            var summaries = [String]()
            // The case clears the phone's Kpersistent between taps: a fresh phone each time, so
            // the reader is never offered FAST. Each document is signed a second after the last
            // and the phone names that time (91): a reader holding A's first document asks for
            // the second.
            for (tap, key, iteration, grant) in [(1, a, 1, true), (2, b, 9, true), (3, a, 3, true), (4, c, 1, false)] {
                let phone = try iterationPhone(reader, issuer: issuer, group: group, key: key, iteration: base + iteration,
                                               signed: reader.now.addingTimeInterval(TimeInterval(tap)))
                let t = try reader.present(phone, "rdr.neg.stepup.validity-iteration")
                let verdict = official(t) { stepUpVerdict(t, phone, grant: grant) }
                guard verdict.status == .pass else {
                    return .fail("tap \(tap) (iteration \(iteration)\(grant ? "" : ", 8 below the AccessIteration 9: Aliro v0.9.4 section 7.2.3 makes it invalid")): \(verdict.reason)",
                                 expected: verdict.expected, actual: verdict.actual)
                }
                summaries.append(t.summary)
            }
            return .pass(summaries.enumerated().map { "tap \($0.offset + 1): \($0.element)" }.joined(separator: "; "))
        },
        ReaderCheck("rdr.neg.stepup.credential-issuer-removed", official: "NFC_RDR_NEG_STEPUP_AD_CREDENTIAL_ISSUER_REMOVED", transactions: 2, section: "§9",
                    title: "one phone (step-up SELECT asked), iteration 9 granted, then a document of iteration 0 signed later: refused by CONTROL FLOW or an EXCHANGE failure status (Aliro 0.9.4 §7.2.3)") { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock documents of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            guard let group = reader.base.trustedReaders.first?.groupID else { return .fail("the phone trusts no reader") }
            let base = iterationBase(slot: 1)
            let key = P256.Signing.PrivateKey()
            func phone(iteration: Int, signedAfter seconds: TimeInterval, fastCache: FastCache? = nil) throws -> ObservingPhone {
                try iterationPhone(reader, issuer: issuer, group: group, key: key, iteration: base + iteration,
                                   signed: reader.now.addingTimeInterval(seconds), stepUpSelect: .required, fastCache: fastCache)
            }
            let first = try phone(iteration: 9, signedAfter: 0)
            let t1 = try reader.present(first, "rdr.neg.stepup.credential-issuer-removed")
            let v1 = official(t1) { stepUpVerdict(t1, first, grant: true) }
            guard v1.status == .pass else { return .fail("tap 1 (iteration 9): \(v1.reason)", expected: v1.expected, actual: v1.actual) }
            // The same phone (its Kpersistent kept), a new document of iteration 0 signed 1 s later.
            let second = try phone(iteration: 0, signedAfter: 1, fastCache: first.session.fastCache)
            let t2 = try reader.present(second, "rdr.neg.stepup.credential-issuer-removed")
            let v2 = removedVerdict(t2, "a document of iteration 0 after one of 9 for the same credential")
            guard v2.status == .pass else { return .fail("tap 2: \(v2.reason)", expected: v2.expected, actual: v2.actual) }
            return .pass("tap 1: \(t1.summary); tap 2: \(t2.summary)")
        },
        ReaderCheck("rdr.stepup.fast.kpersistent-removed", official: "NFC_RDR_STEPUP_FAST_KPERSISTENT_REMOVED", transactions: 7, section: "§8, §9",
                    title: "A (iteration 1) stepped up then FAST; B (iteration 9) stepped up; A's old document now refused after AUTH1; A (iteration 10) must do AUTH1 and step up, then FAST again; B FAST (a reader set for FAST)") { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock documents of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            guard let group = reader.base.trustedReaders.first?.groupID else { return .fail("the phone trusts no reader") }
            let base = iterationBase(slot: 2)
            // All documents signed at the same time, as the case's.
            func phone(_ key: P256.Signing.PrivateKey, iteration: Int, fastCache: FastCache? = nil) throws -> ObservingPhone {
                try iterationPhone(reader, issuer: issuer, group: group, key: key, iteration: base + iteration,
                                   signed: reader.now, stepUpSelect: .required, fastCache: fastCache)
            }
            let keyA = P256.Signing.PrivateKey(), keyB = P256.Signing.PrivateKey()
            let a1 = try phone(keyA, iteration: 1), b = try phone(keyB, iteration: 9)
            var summaries = [String]()
            func tap(_ n: Int, _ p: ObservingPhone, fast: Bool) throws -> CheckVerdict? {
                let t = try reader.present(p, "rdr.stepup.fast.kpersistent-removed")
                let verdict = fast ? fastVerdict(t) : official(t, standard: false) { stepUpVerdict(t, p, grant: true) }
                summaries.append(t.summary)
                guard verdict.status == .pass else { return .fail("tap \(n): \(verdict.reason)", expected: verdict.expected, actual: verdict.actual) }
                return nil
            }
            if let failed = try tap(1, a1, fast: false) { return failed }
            if let failed = try tap(2, a1, fast: true) { return failed }
            if let failed = try tap(3, b, fast: false) { return failed }   // the AccessIteration becomes 9
            // Tap 4: A again with its document of iteration 1, 8 below: the reader must leave any
            // FAST AUTH0 for AUTH1, then refuse.
            let a1again = try phone(keyA, iteration: 1, fastCache: a1.session.fastCache)
            let t4 = try reader.present(a1again, "rdr.stepup.fast.kpersistent-removed")
            summaries.append(t4.summary)
            if let problem = officialCommandProblems(t4, standard: false) { return .fail("tap 4: \(problem)") }
            guard let i = t4.commands.firstIndex(where: { $0.ins == Instruction.auth0 }), i + 1 < t4.commands.count, t4.commands[i + 1].ins == Instruction.auth1 else {
                return .fail("tap 4 (A, iteration 1 after B's 9): Expected AUTH1 command after AUTH0 (saw \(t4.summary))")
            }
            let v4 = removedVerdict(t4, "A's document of iteration 1 after B's 9 (the difference is 8)")
            guard v4.status == .pass else { return .fail("tap 4: \(v4.reason)", expected: v4.expected, actual: v4.actual) }
            // Tap 5: A with iteration 10, its Kpersistent kept: the reader asks FAST, but has
            // dropped A's Kpersistent, so it must go on with AUTH1 and step up.
            let a2 = try phone(keyA, iteration: 10, fastCache: a1again.session.fastCache)
            let t5 = try reader.present(a2, "rdr.stepup.fast.kpersistent-removed")
            summaries.append(t5.summary)
            guard let a = t5.first(Instruction.auth0), let auth0 = try? Auth0Command(parsing: a.data), auth0.flags & Auth0Command.flagFast != 0 else {
                return .fail("tap 5 (A, iteration 10): AUTH0 does not ask for FAST although the reader holds B's Kpersistent (saw \(t5.summary))")
            }
            guard let j = t5.commands.firstIndex(where: { $0.ins == Instruction.auth0 }), j + 1 < t5.commands.count, t5.commands[j + 1].ins == Instruction.auth1 else {
                return .fail("tap 5 (A, iteration 10): Expected AUTH1 command after the FAST AUTH0: A's Kpersistent must be gone since its document was refused (saw \(t5.summary))")
            }
            let v5 = official(t5, standard: false) { stepUpVerdict(t5, a2, grant: true) }
            guard v5.status == .pass else { return .fail("tap 5 (A, iteration 10): \(v5.reason)", expected: v5.expected, actual: v5.actual) }
            if let failed = try tap(6, a2, fast: true) { return failed }   // Kpersistent re-established
            if let failed = try tap(7, b, fast: true) { return failed }
            return .pass(summaries.enumerated().map { "tap \($0.offset + 1): \($0.element)" }.joined(separator: "; "))
        },
    ]

    /// The refusal the §7.2.3 cases accept once AUTH1 is done: CONTROL FLOW (any S1, S2) or an
    /// EXCHANGE whose 97 is not a success (high byte not 01); an EXCHANGE with success fails
    /// ("Aliro v0.9.4 section 7.2.3 makes this Access Document invalid").
    static func removedVerdict(_ t: ObservedTransaction, _ what: String) -> CheckVerdict {
        if let s = t.readerStatus {
            guard s >> 8 != 0x01 else {
                return .fail("\(what): the reader granted (EXCHANGE status \(Hex.encode(s.bigEndianBytes)), \(Names.readerStatus(s))); Aliro v0.9.4 section 7.2.3 makes this Access Document invalid",
                             expected: [0x00], actual: s.bigEndianBytes)
            }
            return .pass("refused with EXCHANGE status \(Hex.encode(s.bigEndianBytes)) (\(Names.readerStatus(s)))")
        }
        if let c = t.controlFlow { return .pass("refused with CONTROL FLOW S1 \(Hex.encode([c.s1])) S2 \(Hex.encode([c.s2]))") }
        return .fail("\(what): the reader neither sent EXCHANGE nor CONTROL FLOW (saw \(t.summary))")
    }
}
