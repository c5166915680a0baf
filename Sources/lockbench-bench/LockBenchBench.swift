// lockbench-bench: benchmarks, each against a baseline measured in the same run.
import ArgumentParser
import Foundation

@main
struct LockBenchBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lockbench-bench",
        abstract: "LockBench's benchmarks, each with a ratio against a baseline measured in the same run.",
        discussion: """
        Build in release mode for meaningful numbers: `swift run -c release lockbench-bench \
        SUBCOMMAND`. Exit codes: 0 measured, 1 a measured run failed its check, 2 usage error, \
        3 environment failure (no lockbench binary, no controller, libnfc missing).
        """,
        subcommands: [Audit.self, AuditBurst.self, Transaction.self, NFC.self, BLE.self, PCSC.self, Durability.self, Trust.self, TrustLoadCommand.self, Push.self, Fleet.self, Approvals.self]
    )

    /// Usage errors exit 2 like the CLI's (ArgumentParser's default is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand { try await asyncCommand.run() } else { try command.run() }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// A benchmark's own exit status (0, or 1–3 as above) as the process's.
private func finish(_ status: Int32) throws {
    if status != 0 { throw ExitCode(status) }
}

extension LockBenchBench {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time `lockbench firmware audit` on a generated inventory against an awk join of the same data.",
            discussion: """
            Generates an inventory of --rows rows, runs `lockbench firmware audit --format csv` \
            (the built binary, as a subprocess, output to /dev/null) and an awk join of the same \
            inventory with the same table, --runs times each, and prints both times and their \
            ratio (goal: at most 3× awk). Build the CLI first: `swift build -c release --product \
            lockbench`.
            """
        )

        @Option(help: "Inventory rows to generate.")
        var rows = 1_000_000

        @Option(help: "Timed runs of each side (the best one counts).")
        var runs = 3

        @Option(help: ArgumentHelp("The lockbench binary to time (default: the one beside this benchmark).", valueName: "path"))
        var lockbench: String?

        @Flag(help: "Print the results as one JSON document (the text goes to standard error).")
        var json = false

        func validate() throws {
            guard rows > 0 else { throw ValidationError("--rows takes a positive number") }
            guard runs > 0 else { throw ValidationError("--runs takes a positive number") }
        }

        func run() throws {
            let report = BenchReport("audit", parameters: ["rows": "\(rows)", "runs": "\(runs)"], json: json)
            try finish(AuditBenchmark.main(rows: rows, runs: runs, lockbench: lockbench, report: report))
        }
    }

    struct Transaction: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The lock side of a standard and of a FAST transaction against the crypto each cannot avoid.",
            discussion: """
            Both state machines run in-process over an in-memory APDU link; each figure is the \
            best mean over --batches batches of --iterations transactions.
            """
        )

        @Option(help: "Transactions per batch.")
        var iterations = 2000

        @Option(help: "Batches (the best batch counts: shared cores make it the least disturbed one).")
        var batches = 5

        @Flag(help: "Print the results as one JSON document (the text goes to standard error).")
        var json = false

        func validate() throws {
            guard iterations > 0 else { throw ValidationError("--iterations takes a positive number") }
            guard batches > 0 else { throw ValidationError("--batches takes a positive number") }
        }

        func run() throws {
            let report = BenchReport("transaction", parameters: ["iterations": "\(iterations)", "batches": "\(batches)"], json: json)
            try finish(TransactionBenchmark.run(iterations: iterations, batches: batches, report: report))
        }
    }

    struct NFC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "nfc",
            abstract: "Tap to decision through libnfc and the virtual PN532 against a bare libnfc SELECT and a bare fsync.",
            discussion: """
            Times taps of a software phone on the whole lock (reader session, engine, bolt, the \
            journal record fsynced) through the real libnfc and the virtual PN532: standard \
            (documents cached, no FAST key), FAST, and step-up (a phone never seen). Baselines \
            measured in the same run: bare libnfc SELECT round trips, and a bare 300-byte append \
            + fsync in the lock's own state directory, 60 back to back at the start of every \
            round and one alone just before each tap.

            The goal is arrival to decision (median) ≤ one fsync + 1 ms. A tap's one fsync \
            comes after the disk was idle since the last tap, and a lone fsync costs more than \
            one of a back-to-back series (on a virtual disk about twice as much), so the goal's \
            reading takes the lone bare fsync. The summary also gives the same taps against the \
            back-to-back fsync, without the emulated phone's work, paired tap by tap, and \
            against the fsync the lock made in each tap (and counts them: one per decision).

            The scenarios alternate over --rounds rounds so that the load of a shared machine \
            drifts over all of them alike. The summary gives the medians of each round (the \
            spread) and how much faster FAST is than standard. --json prints every row, every \
            reading with its limit and verdict, and the fsync count.
            """
        )

        @Option(help: "Bare SELECT round trips (the baseline).")
        var iterations = 1000

        @Option(help: "Taps per scenario (spread over the rounds).")
        var taps = 200

        @Option(help: "Rounds: each scenario runs taps/rounds taps per round, the scenarios alternating.")
        var rounds = 4

        @Option(name: .customLong("poll-interval-ms"), help: ArgumentHelp("The lock loop's poll interval in milliseconds (default: the loop's own, 10).", valueName: "ms"))
        var pollIntervalMilliseconds: Double?

        @Flag(name: .customLong("no-step-up"), help: "Leave out the scenario with a step-up (documents not cached).")
        var noStepUp = false

        @Flag(help: "Print the results as JSON.")
        var json = false

        @Option(help: ArgumentHelp("Also draw the latency of each scenario (arrival to decision) against the lone bare fsync as an SVG file: the whole distribution, tail included.", valueName: "file.svg"))
        var plot: String?

        func validate() throws {
            guard iterations > 0 else { throw ValidationError("--iterations takes a positive number") }
            guard taps > 0 else { throw ValidationError("--taps takes a positive number") }
            guard (1...100).contains(rounds) else { throw ValidationError("--rounds takes a number from 1 to 100") }
            if let ms = pollIntervalMilliseconds, !(ms > 0 && ms <= 10_000) {
                throw ValidationError("--poll-interval-ms takes a number of milliseconds above 0, at most 10000")
            }
        }

        func run() throws {
            let interval = pollIntervalMilliseconds.map { $0 / 1000 } ?? NFCBenchmark.defaultPollInterval
            try finish(NFCBenchmark.main(iterations: iterations, tapCount: taps, rounds: rounds, pollInterval: interval, json: json, stepUp: !noStepUp, plot: plot))
        }
    }

    struct PCSC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pcsc",
            abstract: "Tap to decision through pcscd and vsmartcard-vpcd against a bare SCardTransmit round trip."
        )

        @Option(name: .customLong("round-trips"), help: "Bare SELECT round trips through pcscd (the baseline).")
        var roundTrips = 200

        @Option(help: "Taps (at least 2: a standard one, then FAST).")
        var taps = 20

        @Option(help: "The PC/SC reader name of vpcd's slot.")
        var reader = "Virtual PCD 00 00"

        @Option(help: "The vpcd port the virtual card connects to (35963 for slot 00 00, 35964 for 00 01).")
        var port: UInt16 = 35963

        @Flag(help: "Print the results as one JSON document (the text goes to standard error).")
        var json = false

        @Option(help: ArgumentHelp("Also draw the tap latencies against the bare round trip as an SVG file (the whole distribution).", valueName: "file.svg"))
        var plot: String?

        func validate() throws {
            guard roundTrips > 0 else { throw ValidationError("--round-trips takes a positive number") }
            guard taps >= 2 else { throw ValidationError("--taps takes a number of at least 2") }
        }

        func run() throws {
            let report = BenchReport("pcsc", parameters: ["roundTrips": "\(roundTrips)", "taps": "\(taps)", "reader": reader, "port": "\(port)"], json: json)
            try finish(PCSCBenchmark.main(roundTrips: roundTrips, taps: taps, reader: reader, port: port, report: report, plot: plot))
        }
    }

    struct BLE: ParsableCommand {
        enum Flow: String, EnumerableFlag {
            /// The real reader + engine on the lock and the access protocol's credential on the phone.
            case engine
            /// LockBench's echo flow: the radio alone.
            case echoFlow

            static func help(for value: Flow) -> ArgumentHelp? {
                switch value {
                case .engine: return "The lock runs the real reader and engine, the phone the credential (N standard, then N FAST transactions; the default)."
                case .echoFlow: return "Measure the radio alone with LockBench's echo flow (connection to APDU exchange complete)."
                }
            }
        }

        static let configuration = CommandConfiguration(
            commandName: "ble",
            abstract: "Connection to decision on the Swift lock and phone over virtual controllers against an L2CAP echo.",
            discussion: """
            The median over --count unlocks of the Swift phone on the Swift lock, with the bare \
            link's round trip (--echoes L2CAP echoes of 20 bytes on an open credit-based channel) \
            measured in the same run as the baseline. Starts its own controllers (Bumble's two \
            on one link, or RootCanal) unless both --lock and --phone are given.
            """
        )

        @Option(help: "Unlocks to time (of each kind).")
        var count = 100

        @Option(help: "L2CAP echo round trips (the baseline).")
        var echoes = 200

        @Option(help: ArgumentHelp("The virtual controller to start: bumble or rootcanal.", valueName: "name"))
        var controller = "bumble"

        @Flag var flow: Flow = .engine

        @Option(help: ArgumentHelp("The lock's HCI transport (with --phone: use these instead of starting controllers).", valueName: "tcp:HOST:PORT"))
        var lock: String?

        @Option(help: ArgumentHelp("The phone's HCI transport.", valueName: "tcp:HOST:PORT"))
        var phone: String?

        @Flag(help: "Print the results as one JSON document (the text goes to standard error).")
        var json = false

        @Option(help: ArgumentHelp("Also draw each unlock's latency against the echo round trip as an SVG file (the whole distribution).", valueName: "file.svg"))
        var plot: String?

        func validate() throws {
            guard count > 0 else { throw ValidationError("--count takes a positive number") }
            guard echoes > 0 else { throw ValidationError("--echoes takes a positive number") }
            guard ["bumble", "rootcanal"].contains(controller) else { throw ValidationError("--controller is bumble or rootcanal") }
        }

        func run() throws {
            let report = BenchReport("ble", parameters: ["count": "\(count)", "echoes": "\(echoes)", "controller": controller,
                                                         "flow": flow == .engine ? "engine" : "echo-flow"], json: json)
            try finish(BLEBenchmark.run(count: count, echoes: echoes, lockSpec: lock, phoneSpec: phone,
                                        controller: controller, engine: flow == .engine, report: report, plot: plot))
        }
    }
}

extension LockBenchBench {
    struct Fleet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Many locks and phones in one process: tap rate, latency and memory, against the bare fsync rate and one lock measured in the same run.",
            discussion: """
            Runs `lockbench fleet`'s engine twice on --directory: one lock, one phone, one thread             (each tap waits for its own fsync: the single-lock baseline), then --locks locks with a             phone each, tapped by --workers threads with group commit (the fsyncs waiting at the             same moment share one flush). Before them it times the bare fsync rate of the disk. It             prints taps per second, p50/p95/p99 latency, decisions per flush, the decisions found in             the audit logs, the process's peak RSS, the ratios, and the goals (≥ 1,000 locks,             < 1 GiB, ≥ 1,000 durable taps/s). Build in release: `swift build -c release --product             lockbench-bench`.
            """
        )

        @Option(help: "Locks (one phone each).")
        var locks = 1000
        @Option(help: "Taps in the fleet run.")
        var taps = 20_000
        @Option(help: "Threads tapping at once.")
        var workers = 64
        @Option(help: ArgumentHelp("Where the locks' state goes (default: the temporary directory).", valueName: "dir"))
        var directory: String?
        @Flag(help: "Print the results as one JSON document (the text goes to standard error).") var json = false

        func validate() throws {
            guard (1...100_000).contains(locks) else { throw ValidationError("--locks takes 1…100000") }
            guard (1...10_000_000).contains(taps) else { throw ValidationError("--taps takes 1…10000000") }
            guard (1...1024).contains(workers) else { throw ValidationError("--workers takes 1…1024") }
        }

        func run() async throws {
            let report = BenchReport("fleet", parameters: ["locks": "\(locks)", "taps": "\(taps)", "workers": "\(workers)"], json: json)
            try finish(await FleetBenchmark.run(locks: locks, taps: taps, workers: workers, directory: directory ?? FileManager.default.temporaryDirectory.path, report: report))
        }
    }

    struct Durability: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What making one decision durable costs the lock, against a bare fsync measured in the same run.",
            discussion: """
            On --directory (point it at the disk you care about) the benchmark times a bare \
            300-byte append + fsync (before and after the decisions), then `EmulatedLock.decide` \
            made durable — the engine's checks and one journal record (the audit entry with its \
            state delta) appended and fsynced — for a credential whose document is cached and for \
            a step-up (a new phone's document verified and cached), each on a lock holding 1 and \
            256 cached documents, and a step-up on a lock whose cache is full at 256 (each step-up \
            evicts the document expiring soonest).

            It prints the load average, medians of --samples, each decision as the bare fsync plus \
            the rest, whether it meets the goal of one fsync + 1 ms, and the 256-vs-1 ratio (a \
            journal keeps it near 1). The decisions run back to back, so the bare fsync they are \
            compared with does too; the same append + fsync alone after 2 and 10 ms of an idle \
            disk (what a tap's fsync meets: `lockbench-bench nfc`) is printed beside it.
            """
        )

        @Option(help: "Decisions (and bare fsyncs) to time; the median counts.")
        var samples = 200

        @Option(help: ArgumentHelp("Where to write (default: the temporary directory).", valueName: "dir"))
        var directory: String?

        @Flag(help: "Print the results as one JSON document (the text goes to standard error).")
        var json = false

        func validate() throws {
            guard samples >= 10 else { throw ValidationError("--samples takes a number of at least 10") }
        }

        func run() throws {
            let report = BenchReport("durability", parameters: ["samples": "\(samples)"], json: json)
            try finish(DurabilityBenchmark.run(samples: samples, directory: directory ?? FileManager.default.temporaryDirectory.path, report: report))
        }
    }
}
