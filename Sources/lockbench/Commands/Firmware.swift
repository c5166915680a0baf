import ArgumentParser
import Certification
import Foundation
import LockRuntime

struct FirmwareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "firmware",
        abstract: "Check lock and reader firmware against the wallet-credential certification tables.",
        discussion: """
        Tables: --tables DIR, else $LOCKBENCH_TABLES, else the firmware-tables/ folder of the source \
        tree LockBench was built from (when it still exists), else the copy built into LockBench. Exit \
        codes: 0 certified (every device, for an audit); 1 not certified; 2 bad usage, unknown model, \
        unreadable table or inventory.
        """,
        subcommands: [FirmwareList.self, FirmwareCheck.self, FirmwareAudit.self]
    )
}

/// `--tables DIR`, shared by every firmware command.
struct TablesOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A directory of certification tables (*.csv).", valueName: "dir"))
    var tables: String?

    /// The environment variable naming a tables directory.
    static let environmentVariable = "LOCKBENCH_TABLES"

    /// firmware-tables/ in the source tree this binary was built from.
    static var sourceTreeTables: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("firmware-tables").path
    }

    func load() throws -> CertificationTables {
        let directory: String?
        if let tables {
            directory = tables
        } else if let env = ProcessInfo.processInfo.environment[Self.environmentVariable], !env.isEmpty {
            directory = env
        } else {
            var isDirectory: ObjCBool = false
            let path = Self.sourceTreeTables
            directory = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue ? path : nil
        }
        guard let directory else { return CertificationTables.builtIn() }
        do {
            return try CertificationTables.load(directory: directory)
        } catch {
            throw firmwareFailure(error.description, code: ExitCodes.usage)
        }
    }
}

/// Prints `message` to standard error and returns the exit to throw.
func firmwareFailure(_ message: String, code: Int32) -> ExitCode {
    FileHandle.standardError.write(Data((message.hasSuffix("\n") ? message : message + "\n").utf8))
    return ExitCode(code)
}

// MARK: list

struct FirmwareList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the certified lock and reader models with their first certified firmware."
    )

    @Option(name: .long, help: ArgumentHelp("Only locks or only readers.", valueName: "lock|reader"))
    var kind: DeviceKind?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @OptionGroup var tables: TablesOptions

    func run() throws {
        let loaded = try tables.load()
        let rows = loaded.rows(of: kind)
        if json {
            let models = rows.map { row in
                JSONText.object([
                    ("kind", JSONText.string(row.kind.rawValue)),
                    ("vendor", JSONText.string(row.vendor)),
                    ("model", JSONText.string(row.model)),
                    ("variants", JSONText.array(row.variants.map(JSONText.string))),
                    ("publishedName", JSONText.string(row.publishedName)),
                    ("hardware", JSONText.string(row.hardware)),
                    ("firstCertified", JSONText.string(row.firstCertifiedText)),
                    ("firstCertifiedVersions", JSONText.array(row.firstCertified.map { JSONText.string($0.text) })),
                    ("status", JSONText.string(row.status.rawValue)),
                    ("requires", JSONText.optional(row.requirement?.text)),
                    ("source", JSONText.string(row.source)),
                    ("note", JSONText.optional(row.note.isEmpty ? nil : row.note)),
                    ("table", JSONText.string(row.file)),
                    ("line", String(row.line)),
                ])
            }
            print("{\n  \"tables\": \(JSONText.string(loaded.origin)),\n  \"models\": [\n    "
                  + models.joined(separator: ",\n    ") + "\n  ]\n}")
            return
        }
        let titles = ["KIND", "MODEL", "VARIANTS", "FIRST CERTIFIED", "STATUS", "REQUIRES"]
        let lines = rows.map { row in
            [row.kind.rawValue, row.displayName, row.variants.joined(separator: ", "), row.firstCertifiedText,
             row.status.rawValue, row.requirement.map { "an \($0.phrase)" } ?? ""]
        }
        var widths = titles.map(\.count)
        for cells in lines { for (i, cell) in cells.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count + 2)
            }.joined().trimmingCharacters(in: .whitespaces)
        }
        print("Certification tables: \(loaded.origin)")
        print(render(titles))
        for cells in lines { print(render(cells)) }
    }
}

extension DeviceKind: ExpressibleByArgument {}
extension AuditFormat: ExpressibleByArgument {}

// MARK: check

struct FirmwareCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Is one lock or reader on one firmware certified?",
        discussion: """
        Prints one verdict: certified, upgrade to ≥ X, certification in process, not pursued, \
        requirement not met (e.g. an AD300 without an MT2/MTK2 reader), or unknown model (with \
        suggestions). Models match ignoring case, the vendor prefix and type words, and by variant: nde, \
        "Schlage NDE", MTK15, RC15.
        """
    )

    @Option(name: .long, help: ArgumentHelp("The lock or reader model (or a variant name).", valueName: "model"))
    var model: String

    @Option(name: .long, help: ArgumentHelp("Its firmware version, e.g. 02.12.72 or AD.A.125.", valueName: "version"))
    var firmware: String

    @Option(name: .long, help: ArgumentHelp("The reader paired with the lock (for requirements such as MT2/MTK2).", valueName: "model"))
    var reader: String?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @OptionGroup var tables: TablesOptions

    func validate() throws {
        do {
            _ = try FirmwareVersion(device: firmware.trimmingCharacters(in: .whitespaces))
        } catch {
            throw ValidationError("--firmware: \(error.reason)")
        }
        if model.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--model is empty") }
    }

    func run() throws {
        let loaded = try tables.load()
        let version = try FirmwareVersion(device: firmware.trimmingCharacters(in: .whitespaces))
        let readerName = reader.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        let verdict = loaded.check(model: model.trimmingCharacters(in: .whitespaces), firmware: version, reader: readerName)
        let code: Int32 = verdict.isCertified ? ExitCodes.success : verdict.kind == .unknownModel ? ExitCodes.usage : ExitCodes.negative
        if json {
            let pairs: [(String, String)] = [
                ("model", JSONText.string(model)),
                ("firmware", JSONText.string(firmware)),
                ("reader", JSONText.optional(readerName)),
            ] + AuditReportWriter.verdictPairs(verdict) + [("tables", JSONText.string(loaded.origin))]
            print(JSONText.object(pairs))
        } else if verdict.kind == .unknownModel {
            throw firmwareFailure("error: \(verdict.detail)", code: code)
        } else {
            let row = verdict.row!
            print("\(row.displayName) (\(row.kind.rawValue)) on firmware \(version): \(verdict.summary)")
            print("  \(verdict.detail)")
        }
        if code != ExitCodes.success { throw ExitCode(code) }
    }
}

// MARK: audit

struct FirmwareAudit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Audit a site inventory (CSV): one verdict per device plus a summary.",
        discussion: """
        The inventory's header names at least device_id, model and firmware, optionally reader_model and \
        site, in any order; other columns are kept in the csv and json reports. A malformed row is \
        reported as FILE:LINE: reason (in the table report, and on standard error for csv, json and \
        junit) and the audit goes on. Exit code 0 only when every device is certified; 1 otherwise; 2 \
        when the inventory or the tables cannot be read.
        """
    )

    @Argument(help: ArgumentHelp("The inventory CSV file ('-' for standard input).", valueName: "inventory.csv"))
    var inventory: String

    @Option(name: .long, help: ArgumentHelp("Report format.", valueName: "table|json|csv|junit"))
    var format: AuditFormat = .table

    @OptionGroup var tables: TablesOptions

    func run() throws {
        let loaded = try tables.load()
        let data: Data
        if inventory == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: inventory) else {
                throw firmwareFailure("error: \(inventory): cannot read the inventory", code: ExitCodes.usage)
            }
            data = contents
        }
        let name = inventory == "-" ? "<stdin>" : inventory
        let allCertified: Bool = try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Bool in
            let bytes = raw.bindMemory(to: UInt8.self)
            let result: AuditResult
            do throws(CertificationError) {
                result = try InventoryAudit.run(bytes, file: name, tables: loaded)
            } catch {
                throw firmwareFailure("error: \(error.description)", code: ExitCodes.usage)
            }
            let stdout = FileHandle.standardOutput
            var writer = AuditReportWriter(result: result, bytes: bytes, tablesOrigin: loaded.origin) { chunk in
                chunk.withUnsafeBytes { stdout.write(Data($0)) }
            }
            writer.write(format)
            // The table report lists malformed rows and the summary itself; the machine formats
            // leave them to standard error.
            if format != .table {
                let messages = result.malformedMessages
                if !messages.isEmpty {
                    FileHandle.standardError.write(Data((messages.joined(separator: "\n") + "\n").utf8))
                }
                FileHandle.standardError.write(Data((AuditReportWriter.summaryLine(result.summary) + "\n").utf8))
            }
            return result.summary.allCertified
        }
        if !allCertified { throw ExitCode(ExitCodes.negative) }
    }
}
