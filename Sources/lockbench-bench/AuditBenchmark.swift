// `lockbench-bench audit [--rows N] [--runs K] [--lockbench PATH]`: times
// `lockbench firmware audit --format csv` (the built binary, as a subprocess, output to /dev/null)
// on a generated N-row inventory against an awk join of the same inventory with the same table,
// in the same run, and prints both times and their ratio (goal: at most 3× awk).

import Certification
import Foundation

enum AuditBenchmark {
    /// The exit status: 0 measured, 1 over the goal, 3 no lockbench binary or a run failed.
    static func main(rows: Int, runs: Int, lockbench: String?, report: BenchReport) -> Int32 {
        let binary = lockbench ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("lockbench").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            return report.finish(3, error: "lockbench-bench audit: no lockbench binary at \(binary); build it first (swift build -c release --product lockbench) or pass --lockbench PATH")
        }
        do {
            return report.finish(try run(rows: rows, runs: runs, binary: binary, report: report))
        } catch {
            return report.finish(3, error: "lockbench-bench audit: \(error)")
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static func run(rows: Int, runs: Int, binary: String, report: BenchReport) throws -> Int32 {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-bench-\(ProcessInfo.processInfo.processIdentifier)")
        let tablesDir = dir.appendingPathComponent("tables")
        try FileManager.default.createDirectory(at: tablesDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        // The same table for both sides: the shipped one, as compiled in.
        guard CertificationTables.builtInFiles.count == 1, let table = CertificationTables.builtInFiles.first else {
            throw Failure(description: "the awk baseline reads exactly one table file")
        }
        let tablePath = tablesDir.appendingPathComponent(table.name).path
        try Data(table.bytes).write(to: URL(fileURLWithPath: tablePath))
        let awkPath = dir.appendingPathComponent("audit.awk").path
        try Data(awkProgram.utf8).write(to: URL(fileURLWithPath: awkPath))

        let inventory = dir.appendingPathComponent("inventory.csv").path
        let started = Date()
        let size = try generateInventory(rows: rows, to: inventory)
        report.say("inventory: \(rows) rows, \(size / 1_000_000) MB, generated in \(String(format: "%.2f", Date().timeIntervalSince(started))) s")

        // Equivalence first (untimed): both must give every device the same verdict.
        let checkRows = min(rows, 50_000)
        let sample = dir.appendingPathComponent("sample.csv").path
        try writeHead(of: inventory, lines: checkRows + 1, to: sample)
        let swiftVerdicts = try verdictColumn(try capture(binary, ["firmware", "audit", sample, "--format", "csv", "--tables", tablesDir.path]))
        let awkVerdicts = try verdictColumn(try capture("/usr/bin/env", ["awk", "-F,", "-f", awkPath, tablePath, sample]))
        guard swiftVerdicts.count == checkRows, swiftVerdicts == awkVerdicts else {
            let firstDifference = zip(swiftVerdicts, awkVerdicts).enumerated().first { $0.element.0 != $0.element.1 }
            throw Failure(description: "lockbench and awk disagree (\(swiftVerdicts.count) vs \(awkVerdicts.count) rows; first difference at row \(firstDifference.map { "\($0.offset + 1): \($0.element)" } ?? "none"))")
        }
        var counts: [String: Int] = [:]
        for v in swiftVerdicts { counts[v, default: 0] += 1 }
        report.say("equivalence: lockbench and awk agree on all \(checkRows) sampled verdicts (\(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))")

        // Timed runs, alternating, output to /dev/null; the best of `runs` for each.
        var swiftTimes: [Double] = [], awkTimes: [Double] = []
        for _ in 0..<runs {
            swiftTimes.append(try time(binary, ["firmware", "audit", inventory, "--format", "csv", "--tables", tablesDir.path], expectStatus: [0, 1]))
            awkTimes.append(try time("/usr/bin/env", ["awk", "-F,", "-f", awkPath, tablePath, inventory], expectStatus: [0]))
        }
        let s = swiftTimes.min()!, a = awkTimes.min()!
        func f(_ t: Double) -> String { String(format: "%.3f", t) }
        report.say("lockbench firmware audit --format csv: best \(f(s)) s of \(runs) (\(swiftTimes.map(f).joined(separator: ", ")))  \(Int(Double(rows) / s)) rows/s")
        report.say("awk join (\(awkName())):               best \(f(a)) s of \(runs) (\(awkTimes.map(f).joined(separator: ", ")))  \(Int(Double(rows) / a)) rows/s")
        report.say("ratio lockbench / awk: \(String(format: "%.2f", s / a))× (goal ≤ 3×)")
        report.figure("awk join, best run", a, "s")
        report.figure("lockbench firmware audit --format csv, best run", s, "s", baseline: "awk join, best run", goal: "ratio ≤ 3", met: s / a <= 3)
        return s / a <= 3 ? 0 : 1
    }

    // MARK: Inventory

    /// Model spellings as an inventory might hold them, with the firmware lines to draw from.
    static let models: [(names: [String], versions: [String], reader: Bool)] = [
        (["Schlage NDE", "NDE", "nde", "Schlage NDE Locks"], ["02.12.%d", "02.11.%d", "03.00.%d"], false),
        (["LE", "Schlage LE Locks"], ["01.07.%d", "01.08.%d"], false),
        (["NDEB", "Schlage NDEB"], ["03.07.%d", "03.06.%d"], false),
        (["LEB", "LEB Locks"], ["03.07.%d"], false),
        (["NDEB Si", "ndeb-si"], ["03.09.%d", "03.08.%d"], false),
        (["LEB Si"], ["03.09.%d"], false),
        (["Control B", "Schlage Control B"], ["04.12.%d", "04.11.%d"], false),
        (["Control BM"], ["05.11.%d", "05.12.%d"], false),
        (["Schlage Control"], ["01.00.%d"], false),
        (["AD300", "Schlage AD300"], ["AD.A.%d", "AD.B.%d"], true),
        (["AD400"], ["AD.A.%d"], true),
        (["RC15", "RCK15", "Schlage RC Reader Controller"], ["01.08.%d"], false),
        (["MTB15", "MTBK15"], ["60.47.%d"], false),
        (["MT15", "MTK15", "MT11", "MTMS15"], ["22.%d", "21.%d"], false),
        (["OEM200", "OEM200 Module"], ["2.%d"], false),
        (["MT20"], ["9.%d"], false),
        (["NDX", "Yale 500"], ["1.%d"], false),
    ]
    static let readers = ["MT2", "MTK2", "MT15", ""]
    static let sites = ["HQ", "Plant", "Depot", "Lab", "Annex"]

    /// Writes a deterministic inventory; returns its size in bytes.
    static func generateInventory(rows: Int, to path: String) throws -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { throw Failure(description: "cannot write \(path)") }
        defer { try? handle.close() }
        var out = "device_id,site,location,model,firmware,reader_model\n"
        var size = 0
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        for row in 0..<rows {
            let model = models[next(models.count)]
            let name = model.names[next(model.names.count)]
            let version = String(format: model.versions[next(model.versions.count)], 60 + next(80))
            let reader = model.reader ? readers[next(readers.count)] : ""
            out += "dev-\(row),\(sites[next(sites.count)]),room \(next(500)),\(name),\(version),\(reader)\n"
            if out.utf8.count > 1 << 20 {
                size += out.utf8.count
                handle.write(Data(out.utf8))
                out = ""
            }
        }
        size += out.utf8.count
        handle.write(Data(out.utf8))
        return size
    }

    static func writeHead(of path: String, lines: Int, to target: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "cannot read \(path)") }
        var count = 0, end = data.count
        for (i, b) in data.enumerated() where b == 0x0A {
            count += 1
            if count == lines { end = i + 1; break }
        }
        try data.prefix(end).write(to: URL(fileURLWithPath: target))
    }

    /// The `verdict` column of a CSV report (the benchmark inventory has no quoted fields before it).
    static func verdictColumn(_ csv: Data) throws -> [String] {
        let lines = String(decoding: csv, as: UTF8.self).split(separator: "\n")
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false),
              let column = header.firstIndex(of: "verdict") else { throw Failure(description: "no verdict column") }
        return lines.dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            return column < fields.count ? String(fields[column]) : ""
        }
    }

    // MARK: Processes

    static func capture(_ executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    /// Wall-clock seconds of one run with standard output to /dev/null.
    static func time(_ executable: String, _ arguments: [String], expectStatus: Set<Int32>) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        process.waitUntilExit()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard expectStatus.contains(process.terminationStatus) else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return seconds
    }

    static func awkName() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/alternatives/awk")) ?? "awk"
        return URL(fileURLWithPath: path).lastPathComponent
    }

    // MARK: The awk baseline

    /// Reads the table (first file: quoted CSV, parsed by hand), then joins each inventory row
    /// (plain comma-separated) on the normalized model name, compares the firmware segment by
    /// segment (numbers numerically, names exactly), checks the reader requirement and the status,
    /// and prints the row with line, verdict, matched model, required firmware and a detail — the
    /// same columns `lockbench firmware audit --format csv` adds. Verdicts are cached per
    /// (model, firmware, reader), as lockbench does.
    static let awkProgram = #"""
    function csvsplit(line, out,    n, i, c, f, q) {
        n = 0; f = ""; q = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (q) {
                if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else q = 0 }
                else f = f c
            } else if (c == "\"") q = 1
            else if (c == ",") { out[++n] = f; f = "" }
            else f = f c
        }
        out[++n] = f
        return n
    }
    function key(s,    w, n, i, j, k, r) {
        s = tolower(s); sub(/\(.*/, "", s); gsub(/[^a-z0-9]+/, " ", s)
        n = split(s, w, " ")
        i = 1; if (n > 1 && w[1] == "schlage") i = 2
        while (n > i && (w[n] in typeword)) n--
        r = ""; for (k = i; k <= n; k++) r = r w[k]
        return r
    }
    # -1, 0, 1, or 2 when the versions are on different lines.
    function vcmp(a, b,    x, y, n, m, i, p, q) {
        n = split(a, x, "."); m = split(b, y, ".")
        for (i = 1; i <= (n > m ? n : m); i++) {
            p = i <= n ? x[i] : "0"; q = i <= m ? y[i] : "0"
            if (p ~ /^[0-9]+$/ && q ~ /^[0-9]+$/) { if (p + 0 < q + 0) return -1; if (p + 0 > q + 0) return 1 }
            else if (p != q) return 2
        }
        return 0
    }
    function verdict(model, fw, reader,    k, r, c, v, need, i, names, ok) {
        k = key(model)
        if (!(k in row)) return "unknown-model,,,'" model "' is not a model or variant"
        r = row[k]
        if (status[r] == "n/a") return "not-pursued," display[r] ",," published[r] ": not pursued"
        if (status[r] == "In process") return "in-process," display[r] "," first[r] "," published[r] ": certification is in process"
        c = vcmp(fw, first[r])
        if (c == -1 || c == 2) v = "upgrade-required," display[r] "," first[r] "," published[r] ": firmware " fw " is below " first[r]
        else v = ""
        ok = 1
        if (requires[r] != "") {
            ok = 0
            split(substr(requires[r], index(requires[r], ":") + 1), names, "/")
            for (i in names) if (reader != "" && key(names[i]) == key(reader)) ok = 1
        }
        if (v != "") return v
        if (!ok) return "requirement-not-met," display[r] "," first[r] "," published[r] " must have an " requires[r]
        return "certified," display[r] "," first[r] "," published[r] ": firmware " fw " is at or above " first[r]
    }
    BEGIN {
        split("lock locks reader readers module modules controller controllers enrollment enrolment", t, " ")
        for (i in t) typeword[t[i]] = 1
    }
    FNR == NR {
        if ($0 ~ /^#/ || $0 == "") next
        n = csvsplit($0, f)
        if (!header) { for (i = 1; i <= n; i++) col[f[i]] = i; header = 1; next }
        r = ++rows
        display[r] = f[col["vendor"]] " " f[col["model"]]; published[r] = f[col["published_name"]]
        status[r] = f[col["status"]]; requires[r] = f[col["requires"]]
        first[r] = f[col["first_certified"]]; sub(/,.*/, "", first[r])
        row[key(f[col["model"]])] = r; row[key(f[col["published_name"]])] = r
        nv = split(f[col["variants"]], v, ",")
        for (i = 1; i <= nv; i++) { gsub(/^ +| +$/, "", v[i]); row[key(v[i])] = r }
        next
    }
    FNR == 1 {
        for (i = 1; i <= NF; i++) icol[$i] = i
        print $0 ",line,verdict,matched_model,required_firmware,detail"
        next
    }
    {
        k = $icol["model"] SUBSEP $icol["firmware"] SUBSEP $icol["reader_model"]
        if (!(k in cache)) cache[k] = verdict($icol["model"], $icol["firmware"], $icol["reader_model"])
        print $0 "," FNR "," cache[k]
    }
    """#
}
