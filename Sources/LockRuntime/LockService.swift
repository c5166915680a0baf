import AccessProtocol
import ByteCore
import Certification
import Dispatch
import Foundation
import Lock
import Synchronization
import OfflineUnlock

/// One emulated lock behind every radio: the lock (engine, bolt, clock, state, audit) and its
/// reader (identity, FAST cache, replay memory), shared by NFC and BLE. The only type the radios'
/// loops call. Radios run their APDU exchanges at the same time — a slow or hostile peer on one
/// never holds up a tap on another — and only the short parts are serialized: starting a session
/// from the reader's memory, the decision and its commit (inside `EmulatedLock`), and folding
/// what the session learnt back into the reader.
public final class LockService: Sendable {
    public let configuration: LockConfiguration
    /// The radios' part of the same file (`nfc`, `ble`): what `lock run` starts when no flag overrides it.
    public let radios: RadioSettings
    public let lock: EmulatedLock
    /// The model and firmware against the certification tables; wallet (ECP) polling only when certified.
    public let certification: Verdict
    /// The reader (its memory: FAST cache, replay guard, the next ephemeral key), one user at a
    /// time — never held while APDUs are exchanged. `withReader` reaches it.
    private let reader: Mutex<LockReader>
    /// Transactions between their session's start and their learning folded back: a clean stop
    /// waits for none, and holds this while it secures the bolt so no new one starts.
    private let inFlight = Monitor(0)

    /// `io`: the lock's write/fsync seam (`GroupCommit.io` when many locks share a disk).
    public init(configuration: LockConfiguration, radios: RadioSettings = RadioSettings(),
                tables: CertificationTables = .builtIn(), io: FileIO = .system) throws {
        self.configuration = configuration
        self.radios = radios
        lock = try EmulatedLock(configuration: configuration, io: io)
        certification = try Self.verdict(configuration, tables: tables)
        var saved = lock.fastCache.flatMap { try? JSONDecoder().decode(ReaderMemory.self, from: $0) } ?? ReaderMemory()
        // The snapshot's reader memory, then what the journal says the reader learnt after it.
        for learning in lock.recoveredReaderLearning { learning.apply(to: &saved.fast, &saved.replay) }
        let ids = try configuration.readerIdentity()
        let identity = AccessProtocol.ReaderSigningIdentity(signingKey: lock.readerSigningKey, groupID: ids.groupID, subID: ids.subID)
        let versions = configuration.policy.supportedProtocolVersions.sorted(by: >)
        let options = configuration.protocol
        var readerConfiguration = ReaderConfiguration(identity: identity, supportedVersions: versions,
                                                      policy: options.policy.rawValue, useFast: options.fast,
                                                      stepUpSelect: options.stepUpSelect, stepUpExchange: options.stepUpExchange,
                                                      mailbox: options.mailbox.map(\.operation))
        readerConfiguration.certificate = try configuration.readerCertificate()
        let reader = LockReader(configuration: readerConfiguration,
                                decider: lock.engine, fastCache: saved.fast, replayGuard: saved.replay)
        // The engine answers the reader's step-up question; the lock answers `decide` (it
        // decides, acts and records through `apply`): the engine is never asked around the lock.
        reader.configuration.stepUpEveryTap = options.stepUpEveryTap
        reader.resolver = { [lock] presentation in lock.apply(.presentation(presentation)).resolution }
        reader.limits = configuration.transaction ?? TransactionLimits()
        reader.prepareEphemeralKey()
        self.reader = Mutex(reader)
    }

    /// Runs `body` on the lock's reader (its configuration, its memory) with no transaction
    /// starting or folding back meanwhile.
    public func withReader<T: Sendable, E: Error>(_ body: (LockReader) throws(E) -> T) throws(E) -> T {
        try reader.withLock { (r: inout LockReader) throws(E) -> T in try body(r) }
    }

    public convenience init(configurationPath: String, tables: CertificationTables = .builtIn()) throws {
        let file = try LockFile.load(path: configurationPath)
        try self.init(configuration: file.lock, radios: file.radios, tables: tables)
    }

    /// Certified for wallet credentials: the NFC loop sends the ECP access polling frame.
    public var walletPolling: Bool { certification.isCertified }

    /// Runs one transaction over `link` at the lock's clock, every outcome through `EmulatedLock.apply`,
    /// and stages what the reader learnt for the next journal record.
    public func transact(over link: APDUTransceiver, interface: RadioInterface) -> TransactionOutcome {
        let started = DispatchTime.now().uptimeNanoseconds
        try? lock.tick()
        let now = lock.clock.now()
        inFlight.withLock { $0 += 1 }
        let (session, limits) = reader.withLock { ($0.makeSession(interface: interface), $0.limits) }
        // The long part, with no lock-wide mutex: only the lock's `apply` takes its own, briefly.
        // One path into the lock for every outcome: the session's `decide` is answered by
        // `apply(.presentation)` (the lock decides, acts and records before the phone hears);
        // a transaction the protocol or the transport ended first is `apply(.refused)`.
        let run = LockReader.drive(session, over: link, at: now, limits: limits, remote: { [lock] action, presentation in
            // RKE after the grant: the lock moves the bolt and records it before the phone hears.
            AccessProtocolCompleted.ReaderStatusInformation(after: action, bolt: lock.remote(action, for: presentation))
        }) { [lock] presentation in
            lock.apply(.presentation(presentation)).resolution
        }
        let outcome = LockReader.outcome(run, interface: interface, at: now, started: started)
        if !outcome.decided, let refusal = outcome.refusal {
            _ = lock.apply(.refused(refusal, transaction: outcome.id, interface: interface))
        }
        if let refused = outcome.remote?.refusal {
            lock.recordRemoteRefusal(refused, credential: outcome.credentialID, transaction: outcome.id, interface: interface)
        }
        let learning = ReaderLearning(run.result)
        let memory = reader.withLock { reader in
            reader.apply(run.result)
            reader.prepareEphemeralKey()        // the next tap's, made now rather than after its card arrives
            return ReaderMemory(fast: reader.fastCache, replay: reader.replayGuard)
        }
        inFlight.withLock { $0 -= 1 }
        // Journaled with the next record; the whole memory is encoded only for the next snapshot.
        lock.stageReaderLearning(learning, memory: .deferred { try? JSONEncoder().encode(memory) })
        return outcome
    }

    /// A clean stop: waits for a transaction in progress, secures the bolt if a grant left it
    /// unsecured, and writes the state. Returns whether the bolt had to be secured.
    @discardableResult
    public func secureForStop() throws(LockError) -> Bool {
        // A transaction's waits are bounded (its limits, the radio's timeouts): so is this one.
        let secured = inFlight.wait(until: nil, for: { $0 == 0 }) { _, _ in
            Result { () throws(LockError) in try lock.secureNow() }
        }
        return try secured.get()
    }

    /// Writes what the reader learnt since the last decision (on a clean stop).
    public func flush() {
        reader.withLock { _ in try? lock.flush() }
    }

    static func verdict(_ configuration: LockConfiguration, tables: CertificationTables) throws -> Verdict {
        let version: FirmwareVersion
        do { version = try FirmwareVersion(device: configuration.firmware) } catch {
            throw LockServiceError("firmware '\(configuration.firmware)' in the lock configuration: \(error)")
        }
        return tables.check(model: configuration.model, firmware: version, reader: nil)
    }
}

public struct LockServiceError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// What the reader remembers across restarts, kept in the lock's state blob.
struct ReaderMemory: Codable, Sendable {
    var fast = FastCache()
    var replay = ReplayGuard()
}
