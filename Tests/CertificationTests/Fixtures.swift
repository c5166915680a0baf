import Foundation
import LockBenchTestSupport
import XCTest
@testable import Certification

enum Fixtures {
    /// The repository root (the folder holding Package.swift).
    static var repositoryRoot: URL { Repository.root }

    static var tablesDirectory: String { repositoryRoot.appendingPathComponent("firmware-tables").path }

    /// The shipped tables, loaded from firmware-tables/.
    static let shipped: CertificationTables = {
        do { return try CertificationTables.load(directory: tablesDirectory) } catch { fatalError("\(error)") }
    }()

    /// The rows of the Schlage table (firmware-tables/schlage-apple-nfc.csv), which the tests
    /// check cell by cell against the published guide; another vendor's file leaves them alone.
    static var schlage: [CertificationRow] { shipped.rows.filter { $0.file.hasSuffix("schlage-apple-nfc.csv") } }

    static func version(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> FirmwareVersion {
        do { return try FirmwareVersion(text) } catch {
            XCTFail("'\(text)': \(error)", file: file, line: line)
            fatalError()
        }
    }

    /// Parses one table file given as text, returning the errors (empty when it loads).
    static func tableErrors(_ text: String, name: String = "t.csv") -> [CertificationError] {
        do {
            _ = try CertificationTables.parse(files: [(name, Array(text.utf8))], origin: "test")
            return []
        } catch {
            return error.errors
        }
    }

    /// A valid table text: the header and one NDE row, to be bent by each error test.
    static let header = "kind,vendor,model,variants,published_name,hardware,first_certified,status,requires,source,note"
    static let ndeRow = "lock,Schlage,NDE,,Schlage NDE Locks,All hardware versions support Apple NFC,02.12.72,Complete,,guide:153,"
}
