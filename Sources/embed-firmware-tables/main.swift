// Build tool: writes a Swift file holding each given table file's bytes, for the Certification
// module (run by the EmbedFirmwareTables plugin; not shipped).
// Usage: embed-firmware-tables OUTPUT.swift TABLE.csv...
import Foundation

/// A Swift string literal whose UTF-8 is exactly `text`'s (escapes for quotes, backslashes and
/// control characters; everything else verbatim, so the line ends and any BOM survive).
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0xFEFF:
            out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: embed-firmware-tables OUTPUT.swift TABLE.csv...\n".utf8))
    exit(2)
}
var source = """
// Generated at build time from firmware-tables/ by the EmbedFirmwareTables plugin; do not edit.

enum BuiltInTables {
    static let files: [(name: String, text: String)] = [

"""
for path in arguments.dropFirst() {
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("embed-firmware-tables: cannot read \(path)\n".utf8))
        exit(3)
    }
    guard let text = String(validating: Array(data), as: UTF8.self) else {
        FileHandle.standardError.write(Data("\(path): not UTF-8; a firmware table is UTF-8 text (firmware-tables/README.md)\n".utf8))
        exit(2)
    }
    let name = URL(fileURLWithPath: path).lastPathComponent
    source += "        (\(literal(name)), \(literal(text))),\n"
}
source += "    ]\n}\n"
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("embed-firmware-tables: cannot write \(output): \(error)\n".utf8))
    exit(3)
}
