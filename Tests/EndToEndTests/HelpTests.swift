import Foundation
import LockBenchTestSupport
import XCTest

/// Every command's `--help`, rendered at 80 columns as a user's terminal would, checked against
/// the command's real options: it fits, it names only flags that exist, it shows each name once.
final class HelpTests: XCTestCase {
    /// One command's rendered help and what it declares.
    struct Page {
        var path: [String]
        var text: String
        /// The option names its OPTIONS section declares (`--config`, `-h`…), in order, repeats kept.
        var declared: [String]
        var subcommands: [String]
        var name: String { (["lockbench"] + path).joined(separator: " ") }
    }

    /// Flags of other programs that the help quotes in examples, with the program.
    static let foreignFlags: Set<String> = [
        "--index", // btmgmt --index 0 power off (ble)
    ]

    /// Every command, from the root's SUBCOMMANDS down (argument-parser prints the tree that
    /// `LockBench.configuration.subcommands` declares, so this walks exactly that tree).
    func allPages() throws -> [Page] {
        var pages: [Page] = [], queue: [[String]] = [[]]
        while let path = queue.first {
            queue.removeFirst()
            let result = try LockBenchProcess.run(path + ["--help"], environment: ["COLUMNS": "80", "LINES": "50"])
            XCTAssertEqual(result.status, 0, "lockbench \(path.joined(separator: " ")) --help: \(result.stderr)")
            let page = Self.page(path: path, text: result.stdout)
            pages.append(page)
            queue += page.subcommands.map { path + [$0] }
            XCTAssertLessThan(pages.count, 200, "the command tree does not end")
            if pages.count >= 200 { break }
        }
        return pages
    }

    static func page(path: [String], text: String) -> Page {
        var declared: [String] = [], subcommands: [String] = []
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let first = line.first, !first.isWhitespace, line.hasSuffix(":") { section = line; continue }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let indent = line.prefix { $0 == " " }.count
            if section == "OPTIONS:" || section.hasSuffix("OPTIONS:"), trimmed.hasPrefix("-"), indent <= 4 {
                // `-c, --config <file>   help…`: the names come first, up to the value or the help.
                let tokens = trimmed.split(whereSeparator: { $0 == " " || $0 == "/" })
                    .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
                for token in tokens.prefix(while: { $0.hasPrefix("-") }) {
                    declared.append(String(token.prefix { $0 != "=" }))
                }
            }
            // `  run (default)   Run an emulated lock…`; the closing "See 'lockbench help…'" is prose.
            if section == "SUBCOMMANDS:", indent == 2, let word = trimmed.split(separator: " ").first,
               word.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }) {
                subcommands.append(String(word))
            }
        }
        return Page(path: path, text: text, declared: declared, subcommands: subcommands)
    }

    /// Every `--flag` written anywhere in a help page.
    static func mentionedFlags(_ text: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: "(?<![A-Za-z0-9-])--[a-z][a-z0-9-]*")
        let range = NSRange(text.startIndex..., in: text)
        return Set(regex.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
    }

    func testEveryHelpFitsEightyColumns() throws {
        let pages = try allPages()
        XCTAssertGreaterThan(pages.count, 25, "the walk found too few commands: \(pages.map(\.name))")
        for page in pages {
            // The USAGE line is argument-parser's synopsis, printed unwrapped by design.
            for line in page.text.split(separator: "\n").map(String.init) where line.count > 80 && !line.hasPrefix("USAGE:") {
                // Only a token too long to break may overflow (a path, a URL).
                let indent = line.prefix { $0 == " " }.count
                let longest = line.split(separator: " ").map(\.count).max() ?? 0
                XCTAssertGreaterThan(indent + longest, 60, "\(page.name) --help: a line of \(line.count) columns that could wrap:\n\(line)")
            }
        }
    }

    func testEveryHelpShowsEachOptionNameOnce() throws {
        for page in try allPages() {
            var seen = Set<String>()
            for name in page.declared {
                XCTAssertTrue(seen.insert(name).inserted, "\(page.name) --help shows \(name) twice")
            }
        }
    }

    func testEveryFlagTheHelpNamesExists() throws {
        let pages = try allPages()
        let byName = Dictionary(pages.map { ($0.path.joined(separator: " "), $0) }, uniquingKeysWith: { a, _ in a })
        let always: Set<String> = ["--help", "--version"]
        for page in pages {
            var allowed = always.union(page.declared)
            // The parent's and the children's options, and those of any command the text names.
            if !page.path.isEmpty, let parent = byName[page.path.dropLast().joined(separator: " ")] { allowed.formUnion(parent.declared) }
            for other in pages where other.path.count > page.path.count && Array(other.path.prefix(page.path.count)) == page.path {
                allowed.formUnion(other.declared)
            }
            for other in pages where !other.path.isEmpty && page.text.contains(other.path.joined(separator: " ")) {
                allowed.formUnion(other.declared)
            }
            for flag in Self.mentionedFlags(page.text) where !allowed.contains(flag) && !Self.foreignFlags.contains(flag) {
                XCTFail("\(page.name) --help names \(flag), which it has not (options: \(page.declared.sorted().joined(separator: " ")))")
            }
        }
    }

    /// `decide`'s protocol version is `--protocol-version`; the old `--version` spelling still works
    /// for scripts, but the help shows `--version` once (the tool's).
    func testDecideNamesTheProtocolVersionApart() throws {
        let help = try LockBenchProcess.run(["decide", "--help"], environment: ["COLUMNS": "80"]).stdout
        XCTAssertTrue(Self.page(path: ["decide"], text: help).declared.contains("--protocol-version"), help)
        XCTAssertLessThanOrEqual(Self.page(path: ["decide"], text: help).declared.filter { $0 == "--version" }.count, 1, help)
    }
}
