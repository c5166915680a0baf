import ArgumentParser
import ByteCore
import Foundation

/// A latency plot as one SVG file (`--plot FILE`): the cumulative distribution of each series
/// (x: milliseconds, y: share of samples at or below), a baseline among them, so that a reader
/// sees the whole spread and the tail, not only a median. Text labels name every line (no colour
/// is the only key) and the file needs nothing else to be shown.
struct LatencyPlot {
    var title: String
    /// Name and samples in seconds; the first series is drawn dashed (the baseline).
    var series: [(name: String, seconds: [TimeInterval])]

    static let width = 880.0, height = 480.0
    static let left = 70.0, right = 250.0, top = 40.0, bottom = 60.0
    static let colours = ["#555555", "#1f5fa8", "#0b6b2f", "#a3161b", "#8a5a00", "#6a2c91"]

    func svg() -> String {
        let all = series.flatMap(\.seconds).map { $0 * 1000 }.filter(\.isFinite)
        let maximum = Self.niceCeiling(all.max() ?? 1)
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.height - Self.top - Self.bottom
        func x(_ ms: Double) -> Double { Self.left + min(max(ms / maximum, 0), 1) * plotWidth }
        func y(_ share: Double) -> Double { Self.top + (1 - share) * plotHeight }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(Self.height))" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" aria-labelledby="plot-title">
        <title id="plot-title">\(XMLText.escaped(title))</title>
        <rect width="100%" height="100%" fill="#ffffff"/>
        <text x="\(f(Self.left))" y="24" font-family="sans-serif" font-size="15">\(XMLText.escaped(title))</text>

        """
        for i in 0...5 {
            let ms = maximum * Double(i) / 5, share = Double(i) / 5
            out += "<line x1=\"\(f(x(ms)))\" y1=\"\(f(y(0)))\" x2=\"\(f(x(ms)))\" y2=\"\(f(y(1)))\" stroke=\"#e6e6e6\"/>"
            out += "<text x=\"\(f(x(ms)))\" y=\"\(f(y(0) + 18))\" font-family=\"sans-serif\" font-size=\"11\" text-anchor=\"middle\">\(Self.label(ms))</text>\n"
            out += "<line x1=\"\(f(x(0)))\" y1=\"\(f(y(share)))\" x2=\"\(f(x(maximum)))\" y2=\"\(f(y(share)))\" stroke=\"#e6e6e6\"/>"
            out += "<text x=\"\(f(x(0) - 8))\" y=\"\(f(y(share) + 4))\" font-family=\"sans-serif\" font-size=\"11\" text-anchor=\"end\">\(Int(share * 100))%</text>\n"
        }
        out += "<text x=\"\(f(Self.left + plotWidth / 2))\" y=\"\(f(Self.height - 18))\" font-family=\"sans-serif\" font-size=\"12\" text-anchor=\"middle\">milliseconds</text>\n"
        out += "<text x=\"16\" y=\"\(f(Self.top + plotHeight / 2))\" font-family=\"sans-serif\" font-size=\"12\" transform=\"rotate(-90 16 \(f(Self.top + plotHeight / 2)))\" text-anchor=\"middle\">share of samples at or below</text>\n"
        for (i, s) in series.enumerated() {
            let sorted = s.seconds.map { $0 * 1000 }.filter(\.isFinite).sorted()
            guard !sorted.isEmpty else { continue }
            let colour = Self.colours[i % Self.colours.count]
            var points = "\(f(x(sorted[0]))),\(f(y(0)))"
            for (k, ms) in sorted.enumerated() {
                points += " \(f(x(ms))),\(f(y(Double(k) / Double(sorted.count))))"
                points += " \(f(x(ms))),\(f(y(Double(k + 1) / Double(sorted.count))))"
            }
            let median = sorted[sorted.count / 2]
            out += "<polyline class=\"series\" data-name=\"\(XMLText.escaped(s.name))\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"\(i == 0 ? " stroke-dasharray=\"6 4\"" : "") points=\"\(points)\"/>\n"
            let ly = Self.top + 14 + Double(i) * 34
            out += "<line x1=\"\(f(Self.width - Self.right + 16))\" y1=\"\(f(ly - 4))\" x2=\"\(f(Self.width - Self.right + 40))\" y2=\"\(f(ly - 4))\" stroke=\"\(colour)\" stroke-width=\"2\"\(i == 0 ? " stroke-dasharray=\"6 4\"" : "")/>"
            out += "<text x=\"\(f(Self.width - Self.right + 46))\" y=\"\(f(ly))\" font-family=\"sans-serif\" font-size=\"12\">\(XMLText.escaped(s.name))</text>"
            out += "<text x=\"\(f(Self.width - Self.right + 46))\" y=\"\(f(ly + 14))\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#444\">n=\(sorted.count), median \(Self.label(median)) ms\(i == 0 ? " (baseline)" : "")</text>\n"
        }
        return out + "</svg>\n"
    }

    /// 1, 2 or 5 times a power of ten at or above `v`.
    static func niceCeiling(_ v: Double) -> Double {
        guard v > 0, v.isFinite else { return 1 }
        let power = pow(10, floor(log10(v)))
        for step in [1.0, 2, 5, 10] where step * power >= v { return step * power }
        return 10 * power
    }

    static func label(_ ms: Double) -> String { ms >= 10 || ms == 0 ? String(format: "%.0f", ms) : String(format: "%.2g", ms) }

    /// Writes the plot; a file that cannot be written is an environment failure (exit 3).
    func write(to path: String) throws {
        do { try svg().write(toFile: path, atomically: true, encoding: .utf8) } catch {
            FileHandle.standardError.write(Data("lockbench-bench: --plot \(path): \(error.localizedDescription)\n".utf8))
            throw ExitCode(3)
        }
    }
}

