import Foundation
import LockRuntime
import Synchronization

/// What a benchmark reports, for people and for scripts. Every figure names the baseline it was
/// divided by (measured in the same run) and, where the issue set one, its goal and verdict.
/// With `--json` the human lines go to standard error and standard output carries one JSON
/// document, written when the run ends, failed runs included (`status`, `error`).
final class BenchReport: Sendable {
    struct Figure: Codable, Sendable, Equatable {
        var name: String
        var value: Double
        var unit: String
        /// The figure this one is divided by for `ratio`, when it has one.
        var baseline: String?
        var ratio: Double?
        var goal: String?
        var met: Bool?
    }

    struct Document: Codable, Sendable {
        var benchmark: String
        var parameters: [String: String]
        var figures: [Figure] = []
        /// Whole series where the benchmark keeps them: count, median, p95, min, max.
        var distributions: [NFCBenchmark.Stats] = []
        var status: Int32 = 0
        var error: String?
    }

    let json: Bool
    private let document: Mutex<Document>

    init(_ benchmark: String, parameters: [String: String] = [:], json: Bool) {
        self.json = json
        document = Mutex(Document(benchmark: benchmark, parameters: parameters))
    }

    /// A line for people: standard output, or standard error when standard output is JSON.
    func say(_ line: String) {
        if json { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { emitLine(line) }
    }

    /// Records a figure; `baseline` names a figure already recorded, and the ratio is taken
    /// against it unless `ratio` is given (some ratios are medians of per-round ratios).
    @discardableResult
    func figure(_ name: String, _ value: Double, _ unit: String, baseline: String? = nil, ratio: Double? = nil,
                goal: String? = nil, met: Bool? = nil) -> Figure {
        document.withLock { doc in
            var ratio = ratio
            if ratio == nil, let baseline, let base = doc.figures.last(where: { $0.name == baseline }), base.value != 0 {
                ratio = value / base.value
            }
            let figure = Figure(name: name, value: Self.finite(value), unit: unit, baseline: baseline, ratio: ratio.map(Self.finite), goal: goal, met: met)
            doc.figures.append(figure)
            return figure
        }
    }

    /// Records a series' distribution (milliseconds) and prints its line.
    func distribution(_ stats: NFCBenchmark.Stats) {
        say(stats.line)
        document.withLock { $0.distributions.append(stats) }
    }

    var figures: [Figure] { document.withLock { $0.figures } }

    /// Ends the run: prints the JSON document in JSON mode, and returns `status` as the exit status.
    func finish(_ status: Int32, error: String? = nil) -> Int32 {
        if let error { say(error) }
        let doc = document.withLock { doc in
            doc.status = status
            doc.error = error
            return doc
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            if let data = try? encoder.encode(doc) { emitLine(String(decoding: data, as: UTF8.self)) }
        }
        return status
    }

    /// JSON has no infinity or NaN (a zero baseline, an empty series): those become 0.
    private static func finite(_ x: Double) -> Double { x.isFinite ? x : 0 }
}
