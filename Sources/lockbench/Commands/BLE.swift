import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import ReaderSeam

struct BLECommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ble",
        abstract: "The BLE radio on its own: an emulated lock peripheral and a virtual phone over an HCI controller.",
        discussion: """
        Transports (--ble): hci0 (a real adapter through BlueZ's HCI user channel; power it down in \
        bluetoothd first: sudo btmgmt --index 0 power off), uart:/dev/ttyACM0:1000000 (an H4 serial \
        controller), tcp:HOST:PORT or unix:PATH (a virtual controller, e.g. python3 -m \
        bumble.apps.controllers tcp-server:_:9101 tcp-server:_:9102).
        """,
        subcommands: [BLELockCommand.self, BLEPhoneCommand.self]
    )
}

/// Flags every BLE command shares.
struct BLETransportOptions: ParsableArguments {
    @Option(name: .customLong("ble"), help: "HCI transport: hci0, uart:/dev/ttyACM0:1000000, tcp:HOST:PORT or unix:PATH.")
    var transport: String

    @Option(help: "Write the HCI traffic to this btsnoop file (opens in Wireshark/tshark).")
    var btsnoop: String?

    @Flag(help: "Log HCI events, connections and failures to stderr.")
    var verbose = false

    func validate() throws {
        do {
            _ = try TransportSpec(parsing: transport)
        } catch {
            throw ValidationError(error.reason)
        }
    }

    var spec: TransportSpec { (try? TransportSpec(parsing: transport))! }

    var logger: BLELogger {
        let verbose = self.verbose
        return { line in if verbose { FileHandle.standardError.write(Data((line + "\n").utf8)) } }
    }
}

/// `lockbench ble lock`: the lock peripheral running LockBench's echo reader flow (the engine's
/// reader session runs here through `lockbench lock run --ble`).
struct BLELockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Advertise as a lock (service FFF2), accept phones' L2CAP channels and run the echo reader flow."
    )

    @OptionGroup var ble: BLETransportOptions

    @Option(help: "Device name (GAP and scan response).")
    var name = "LockBench"

    @Option(help: "L2CAP SPSM of the access-protocol channel.")
    var psm: UInt16 = AliroBLE.defaultPSM

    @Option(help: "Exit after this many transactions (0: run until interrupted).")
    var count = 0

    @Option(help: "Exit with an environment error when the controller is not up within this many seconds.")
    var startTimeout: Double = 10

    @Option(help: ArgumentHelp("Advertise from this static random address (most significant byte first) instead of the controller's.", valueName: "C3:12:34:56:78:9A"))
    var address: String?

    func validate() throws {
        if let address {
            do { _ = try BLEAddress(staticRandom: address) } catch { throw ValidationError("--address: \(error.reason)") }
        }
    }

    func run() throws {
        var config = BLELock.Configuration(transport: ble.spec)
        config.btsnoop = ble.btsnoop
        config.name = name
        config.psm = psm
        config.log = ble.logger
        config.address = address.flatMap { try? BLEAddress(staticRandom: $0) }
        /// Transactions finished and granted; the command ends once `target` finished.
        let tally = Monitor<(finished: Int, granted: Int)>((0, 0))
        let target = count
        let lock: BLELock
        do { lock = try BLELock(configuration: config) } catch {
            throw fail(error.reason, code: ExitCodes.environment)
        }
        lock.onEvent = { event in
            if case .ready(let address) = event { print("advertising as \(address) on \(ble.spec), PSM 0x\(String(psm, radix: 16))") }
        }
        lock.start()
        guard lock.waitUntilAdvertising(timeout: startTimeout), lock.host.isReady else {
            let error = lock.host.notReadyError(after: startTimeout)
            lock.stop()
            throw fail(error.reason, code: ExitCodes.environment)
        }
        let loop = ReaderLoop(reader: lock, configuration: .init(maxConcurrent: 4), granted: { $0 },
                              transaction: EchoFlow.lockTransaction { ok in
            print(ok ? "granted" : "denied")
            tally.withLock { t in
                t.finished += 1
                if ok { t.granted += 1 }
            }
        })
        loop.start()
        if target == 0 {
            while true { Thread.sleep(forTimeInterval: 3600) }
        }
        tally.wait(until: nil, for: { $0.finished >= target }) { _, _ in }
        Thread.sleep(forTimeInterval: 0.2)
        loop.stop()
        lock.stop()
        if tally.withLock({ $0.granted }) < target { throw ExitCode(ExitCodes.negative) }
    }
}

/// `lockbench ble phone`: the virtual phone — a software credential (or the echo credential)
/// that scans for a lock, connects, discovers, opens the channel and answers the reader.
struct BLEPhoneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "Scan for a lock, connect, discover, open its L2CAP channel and run a credential.",
        discussion: """
        With --key, the phone runs the access protocol's credential side with that key and its \
        access/revocation documents (--document, repeatable), trusting the reader named by \
        --trust-reader (NAME.reader.json from `lockbench key reader`, or the lock's configuration). \
        Without --key it answers LockBench's echo flow (`lockbench ble lock`).

        When several locks advertise, the phone connects to the one it is told to: --lock-address names \
        it by address; otherwise a phone with --trust-reader picks a lock whose advertisement carries \
        that reader's group id (and sub id, from a reader identity or a lock configuration), and a phone \
        without one takes the first lock it hears. Exit codes: 0 granted, 1 denied, 3 no controller / no \
        lock found.
        """
    )

    @OptionGroup var ble: BLETransportOptions

    @OptionGroup var phone: PhoneOptions

    @Flag(help: "Echo flow only: refuse the reader's commands (to see a denial).")
    var refuse = false

    @Option(help: "Run this many transactions in a row.")
    var count = 1

    @Option(name: .customLong("lock-address"), help: ArgumentHelp("Connect to the lock with this address (as the lock prints it, e.g. C3:12:34:56:78:9A).", valueName: "address"))
    var lockAddress: String?

    @Flag(name: .customLong("keep-going"), help: ArgumentHelp("With --count: a transaction that fails (no lock, the link lost, the lock gone quiet) is printed and the next one starts (as a phone under `conformance credential --ble`, whose negative checks end links on purpose); the exit status is then 1 if any failed."))
    var keepGoing = false

    @Option(name: .customLong("radio-fault"), help: ArgumentHelp("Misbehave on the radio on purpose, to test `conformance credential --ble` (repeatable): \(BLEPhoneFaults.names.map(\.0).joined(separator: ", ")).", valueName: "name"))
    var radioFaults: [String] = []

    @Option(help: ArgumentHelp("Remote keyless entry: open with 02 06, complete the transaction, then send the RKE request with this action and print the lock's reader status changed.", valueName: "secure|unsecure"))
    var rke: String?

    func validate() throws {
        if let rke, RemoteAction(name: rke) == nil { throw ValidationError("--rke \(rke): give secure or unsecure") }
        for name in radioFaults where !BLEPhoneFaults.names.contains(where: { $0.0 == name }) {
            throw ValidationError("unknown --radio-fault \(name); one of \(BLEPhoneFaults.names.map(\.0).joined(separator: ", "))")
        }
        if let lockAddress {
            do { _ = try BLEAddress(parsing: lockAddress) } catch { throw ValidationError("--lock-address: \(error.reason)") }
        }
    }

    /// The lock to connect to: --lock-address, else the trusted readers' ids, else any lock.
    private func target() throws -> LockTarget {
        if let lockAddress { return .address(try BLEAddress(parsing: lockAddress)) }
        let readers = try phone.trustReader.compactMap { path in try SoftwarePhone.readerIDs(path, group: phone.readerGroup) }
        return readers.isEmpty ? .any : .readers(readers.map { LockTarget.Reader(groupID: $0.group, subID: $0.sub) })
    }

    /// The credential's responder: the access protocol's credential session, or the echo credential.
    private func responder() throws -> APDUResponder {
        try phone.makeSession(interface: .ble) ?? EchoCredential(refuse: refuse)
    }

    func run() throws {
        let credential: APDUResponder
        do { credential = try responder() } catch let e as UserError { throw fail(e.message, code: e.code) }
        let session = credential as? CredentialSession
        if let rke {
            guard let session else { throw fail("--rke needs the access protocol: give --key (and the phone's documents)", code: ExitCodes.usage) }
            session.remoteAction = RemoteAction(name: rke)
        }
        var config = BLEPhone.Configuration(transport: ble.spec)
        config.btsnoop = ble.btsnoop
        config.log = ble.logger
        config.faults = radioFaults.reduce(into: BLEPhoneFaults()) { f, name in if let x = BLEPhoneFaults.names.first(where: { $0.0 == name })?.1 { f.formUnion(x) } }
        do { config.target = try target() } catch let e as UserError { throw fail(e.message, code: e.code) }
        let phone: BLEPhone
        do {
            phone = try BLEPhone(configuration: config)
            try phone.start()
        } catch {
            throw fail(error.reason, code: ExitCodes.environment)
        }
        defer { phone.stop() }
        var allGranted = true
        for _ in 0..<max(1, count) {
            do {
                let outcome = try phone.unlock(with: credential)
                // RKE: done when the lock answered the request with its status.
                let granted = session?.remoteAction != nil ? session?.lastStatusChanged != nil : outcome.granted
                allGranted = allGranted && granted
                if let action = session?.remoteAction {
                    let changed = session?.lastStatusChanged.map { "reader status changed: \($0.readerStatus.name) (\(Hex.encode($0.encoded())))" }
                        ?? session?.lastStatusChangedProblem.map { "reader status changed did not open: \($0)" }
                        ?? (session?.sentRemoteRequest == true ? "no reader status changed"
                            : session?.lastCompleted != nil ? "no RKE request sent" : "no RKE request sent (no completed notification opened)")
                    print("RKE \(action.name) at \(outcome.lock): \(changed) after \(outcome.commandsAnswered) commands in \(String(format: "%.1f", outcome.connectToCompleted * 1000)) ms")
                } else {
                    print("\(granted ? "granted" : "denied") by \(outcome.lock) after \(outcome.commandsAnswered) commands in \(String(format: "%.1f", outcome.connectToCompleted * 1000)) ms")
                }
            } catch where keepGoing {
                allGranted = false
                print("failed: \(error.reason)")
            } catch {
                throw fail(error.reason, code: ExitCodes.environment)
            }
        }
        if !allGranted { throw ExitCode(ExitCodes.negative) }
    }
}

/// Prints a user-facing error and returns the exit code to throw (one code per meaning).
func fail(_ message: String, code: Int32) -> ExitCode {
    FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
    return ExitCode(code)
}
