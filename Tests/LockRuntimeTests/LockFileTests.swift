import ByteCore
import Foundation
import Lock
import LockBenchTestSupport
import LockRuntime
import XCTest

/// The lock configuration file is one JSON object with two owners: the lock's part
/// (`LockConfiguration`, module Lock) and the radios' part (`RadioSettings`, here). Files written
/// before the split load the same, and every error still names the field.
final class LockFileTests: XCTestCase {
    /// A provisioned lock's directory and its `lock.json` as a JSON object to add sections to.
    private func provisioned() throws -> (dir: URL, object: [String: Any]) {
        let dir = try temporaryDirectory("lockbench-lockfile")
        _ = try LockProvisioning(directory: dir)
        let data = try Data(contentsOf: dir.appendingPathComponent("lock.json"))
        return (dir, try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any]))
    }

    private func write(_ object: [String: Any], to dir: URL) throws -> String {
        let path = dir.appendingPathComponent("radios.json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The `ble` section: defaults, durations as text, a bad group resolving key or duration named.
    func testBLESettingsDefaultsDurationsAndErrors() throws {
        let (dir, base) = try provisioned()
        func load(_ ble: String) throws -> RadioSettings.BLE? {
            var object = base
            object["ble"] = try JSONSerialization.jsonObject(with: Data(ble.utf8))
            return try LockFile.load(path: try write(object, to: dir)).radios.ble
        }
        let defaults = try XCTUnwrap(load(#"{"transport":"tcp:127.0.0.1:9"}"#))
        XCTAssertEqual(defaults.idleTimeout, 5)
        XCTAssertEqual(defaults.transactionTimeout, 10)
        XCTAssertEqual(defaults.tagRotation, 900)
        XCTAssertNil(defaults.address)
        XCTAssertNil(defaults.groupResolvingKey)
        let set = try XCTUnwrap(load(#"{"address":"C3:12:34:56:78:9A","idleTimeout":"2s","transactionTimeout":"1m","tagRotation":"1h","groupResolvingKey":"000102030405060708090a0b0c0d0e0f"}"#))
        XCTAssertEqual(set.address, "C3:12:34:56:78:9A")
        XCTAssertEqual(set.idleTimeout, 2)
        XCTAssertEqual(set.transactionTimeout, 60)
        XCTAssertEqual(set.tagRotation, 3600)
        let again = try JSONDecoder().decode(RadioSettings.BLE.self, from: try JSONEncoder().encode(set))
        XCTAssertEqual(again, set)
        XCTAssertThrowsError(try load(#"{"groupResolvingKey":"00"}"#)) {
            XCTAssertEqual(($0 as? LockError)?.code, .invalidConfiguration)
            XCTAssertTrue("\($0)".contains("radios.json") && "\($0)".contains("ble.groupResolvingKey") && "\($0)".contains("32 hex digits"), "\($0)")
        }
        XCTAssertThrowsError(try load(#"{"idleTimeout":"0s"}"#)) {
            XCTAssertTrue("\($0)".contains("ble.idleTimeout"), "\($0)")
        }
        XCTAssertThrowsError(try load(#"{"transactionTimeout":"soon"}"#)) {
            XCTAssertTrue("\($0)".contains("ble.transactionTimeout"), "\($0)")
        }
    }

    /// A file with both parts loads into both owners, the lock's part alone loads as it did, and the
    /// file written back has the same keys and loads equal.
    func testBothPartsRoundTripThroughOneObject() throws {
        var (dir, object) = try provisioned()
        object["nfc"] = ["connstring": "pn532_uart:/dev/ttyUSB0"]
        object["ble"] = ["transport": "tcp:127.0.0.1:9000", "idleTimeout": "2s"]
        let path = try write(object, to: dir)
        let file = try LockFile.load(path: path)
        XCTAssertEqual(file.radios.nfc?.connstring, "pn532_uart:/dev/ttyUSB0")
        XCTAssertEqual(file.radios.ble?.transport, "tcp:127.0.0.1:9000")
        XCTAssertEqual(file.radios.ble?.idleTimeout, 2)
        XCTAssertEqual(try LockConfiguration.load(path: path), file.lock, "the lock's part skips the radios'")

        let written = try XCTUnwrap(JSONSerialization.jsonObject(with: file.encoded()) as? [String: Any])
        XCTAssertEqual(Set(written.keys).intersection(["model", "firmware", "reader", "nfc", "ble"]),
                       ["model", "firmware", "reader", "nfc", "ble"])
        try file.encoded().write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try LockFile.load(path: path), file)
        XCTAssertEqual(try LockService(configurationPath: path).radios, file.radios)
    }

    /// No radio section: no radios configured, and none written back.
    func testAFileWithoutRadiosHasNone() throws {
        let (dir, object) = try provisioned()
        let file = try LockFile.load(path: try write(object, to: dir))
        XCTAssertEqual(file.radios, RadioSettings())
        let written = try XCTUnwrap(JSONSerialization.jsonObject(with: file.encoded()) as? [String: Any])
        XCTAssertNil(written["nfc"])
        XCTAssertNil(written["ble"])
    }
}
