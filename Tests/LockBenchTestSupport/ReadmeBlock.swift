import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A README `sh` block, read the way every README test runs one: the block is found by the text
/// just before it (a heading) or the line it opens with, `\` continuations are joined, and each
/// line is split into the command and its `# → expected output` comment.
public struct ReadmeBlock {
    public struct Line: Equatable {
        /// The line as written (continuations joined).
        public var raw: String
        /// The command, without its comment, trimmed.
        public var command: String
        /// What a `# → TEXT` (or `# → TEXT (why)`) comment says the command prints.
        public var expect: String?
        /// The command split into words; `"…"` groups words (the quotes go).
        public var words: [String] {
            var words = [String](), current = "", quoted = false
            for ch in command {
                if ch == "\"" { quoted.toggle(); continue }
                if ch == " " && !quoted { if !current.isEmpty { words.append(current); current = "" }; continue }
                current.append(ch)
            }
            if !current.isEmpty { words.append(current) }
            return words
        }
        /// The comment begins at the first `#` that opens the line or follows a space.
        init(_ raw: String) {
            self.raw = raw
            let hash = raw.hasPrefix("#") ? raw.startIndex : raw.range(of: " #")?.lowerBound ?? raw.endIndex
            command = raw[..<hash].trimmingCharacters(in: .whitespaces)
            let comment = raw[hash...].drop { $0 == " " || $0 == "#" }.trimmingCharacters(in: .whitespaces)
            expect = comment.hasPrefix("→ ") ? String(comment.dropFirst(2)).components(separatedBy: " (").first : nil
        }
        /// The arguments after `lockbench`, or nil for a line that does not run `lockbench`.
        public var lockbenchArguments: [String]? {
            let w = words
            return w.first == "lockbench" ? Array(w.dropFirst()) : nil
        }
    }

    public let lines: [Line]

    /// The first `sh` block after `heading`, or the block that opens with `firstLine` when `heading` is nil.
    public init(after heading: String? = nil, opening firstLine: String? = nil) throws {
        let readme = try String(contentsOf: Repository.url("README.md"), encoding: .utf8)
        let from = heading.flatMap { readme.range(of: $0)?.upperBound } ?? readme.startIndex
        let fence = "```sh\n" + (firstLine ?? "")
        guard heading == nil || from != readme.startIndex,
              let start = readme.range(of: fence, range: from..<readme.endIndex) else {
            throw LineTimeout(expected: heading ?? fence, seen: [])
        }
        let rest = readme[readme.index(start.lowerBound, offsetBy: "```sh\n".count)...]
        guard let end = rest.range(of: "```") else { throw LineTimeout(expected: "the end of the block after \(heading ?? fence)", seen: []) }
        let body = String(rest[..<end.lowerBound]).replacingOccurrences(of: "\\\n", with: " ")
        lines = body.split(separator: "\n").map { Line(String($0)) }
    }

    /// A TCP port on 127.0.0.1 free at the moment (README ports are replaced: the machine is shared).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
