/// The catalogue tables of docs/conformance.md, made from the checks themselves (a test keeps
/// the document equal to them).
public enum CatalogueTable {
    public static func markdown<S, P>(_ checks: [ConformanceCheck<S, P>]) -> String {
        var out = "| check | mirrors | § | behaviour |\n|---|---|---|---|\n"
        for c in checks {
            let mirrors = c.officialCase.map { "`\($0)`" } ?? (c.advisory ? "advisory" : "—")
            out += "| `\(c.id)` | \(mirrors) | \(c.section.replacingOccurrences(of: "§", with: "")) | \(c.title.replacingOccurrences(of: "|", with: "\\|")) |\n"
        }
        return out
    }
}
