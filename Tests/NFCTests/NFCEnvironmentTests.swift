import Foundation
import LockBenchTestSupport
import XCTest
@testable import NFC

/// The machine checks behind `lockbench doctor` and the open-failure advice, on fake /sys and
/// /proc trees, plus the udev files and install script shipped in udev/.
final class NFCEnvironmentTests: XCTestCase {
    static var repository: URL { Repository.root }

    private func temporaryPath() throws -> String { try temporaryDirectory("lockbench-env").path }

    private func fakeUSBDevice(_ sysfs: String, _ name: String, vendor: String, product: String, driver: String?) throws {
        let dir = "\(sysfs)/\(name)"
        try FileManager.default.createDirectory(atPath: "\(dir)/\(name):1.0", withIntermediateDirectories: true)
        for (file, value) in [("idVendor", vendor), ("idProduct", product), ("busnum", "1"), ("devnum", "7")] {
            try (value + "\n").write(toFile: "\(dir)/\(file)", atomically: true, encoding: .utf8)
        }
        if let driver {
            try FileManager.default.createDirectory(atPath: "\(sysfs)/drivers/\(driver)", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/\(name):1.0/driver", withDestinationPath: "\(sysfs)/drivers/\(driver)")
        }
    }

    func testFindsKnownReadersOnTheBusAndTheirKernelDriver() throws {
        let sysfs = try temporaryPath()
        try fakeUSBDevice(sysfs, "1-1", vendor: "072f", product: "2200", driver: nil)
        try fakeUSBDevice(sysfs, "1-2", vendor: "04cc", product: "2533", driver: "pn533_usb")
        try fakeUSBDevice(sysfs, "1-3", vendor: "1d6b", product: "0002", driver: "hub")  // not a reader
        let readers = NFCEnvironment.usbReaders(sysfs: sysfs)
        XCTAssertEqual(readers.map(\.model.name), ["ACS ACR122U", "NXP PN533"])
        XCTAssertEqual(readers[0].devicePath, "/dev/bus/usb/001/007")
        XCTAssertNil(readers[0].kernelDriver)
        XCTAssertEqual(readers[1].kernelDriver, "pn533_usb")
        XCTAssertEqual(readers[1].model.driver, "pn53x_usb")
    }

    func testOpenFailureAdviceForUSBReaders() throws {
        let sysfs = try temporaryPath()
        let none = NFCEnvironment.diagnoseOpenFailure(connstring: "acr122_usb", sysfs: sysfs)
        XCTAssertEqual(none.code, .noDevice)
        XCTAssertTrue(none.reason.contains("pn53x_usb") && none.reason.contains("pn532_uart:/dev/ttyUSB0"), none.reason)

        try fakeUSBDevice(sysfs, "1-1", vendor: "072f", product: "2200", driver: nil)
        let locked = NFCEnvironment.diagnoseOpenFailure(connstring: "acr122_usb", sysfs: sysfs)
        XCTAssertEqual(locked.code, .permissionDenied)
        XCTAssertTrue(locked.reason.contains("sudo ./udev/install.sh") && locked.reason.contains("plugdev"), locked.reason)
        XCTAssertEqual(NFCEnvironment.diagnoseOpenFailure(connstring: "pn53x_usb", sysfs: sysfs).code, .noDevice, "an ACR122U is no pn53x_usb reader")

        try fakeUSBDevice(sysfs, "1-2", vendor: "04cc", product: "2533", driver: "pn533_usb")
        let busy = NFCEnvironment.diagnoseOpenFailure(connstring: "pn53x_usb", sysfs: sysfs)
        XCTAssertEqual(busy.code, .deviceBusy)
        XCTAssertTrue(busy.reason.contains("pn533_usb") && busy.reason.contains("sudo modprobe -r pn533_usb pn533 nfc"), busy.reason)
        XCTAssertEqual(NFCEnvironment.diagnoseOpenFailure(connstring: nil, sysfs: sysfs).code, .deviceBusy)
    }

    func testOpenFailureAdviceForSerialPorts() throws {
        let missing = NFCEnvironment.diagnoseOpenFailure(connstring: "pn532_uart:/dev/ttyUSB9")
        XCTAssertEqual(missing.code, .noDevice)
        XCTAssertTrue(missing.reason.contains("adapter plugged in"), missing.reason)
        XCTAssertEqual(NFCEnvironment.diagnoseOpenFailure(connstring: "pn532_uart").code, .noDevice)
        XCTAssertEqual(NFCEnvironment.diagnoseOpenFailure(connstring: "pn532_uart:/dev/null:115200").code, .openFailed)
    }

    func testThisMachineHasNoUSBReaders() {
        XCTAssertEqual(NFCEnvironment.usbReaders(), [])
    }

    func testConflictingModulesFromProcModules() throws {
        let dir = try temporaryPath()
        let path = "\(dir)/modules"
        try "pn533_usb 20480 0 - Live 0x0\npn533 45056 1 pn533_usb, Live 0x0\nnfc 135168 1 pn533, Live 0x0\next4 1 0 - Live 0x0\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(NFCEnvironment.loadedConflictingModules(procModules: path), ["pn533_usb", "pn533", "nfc"])
        try "ext4 1 0 - Live 0x0\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(NFCEnvironment.loadedConflictingModules(procModules: path), [])
    }

    func testLibNFCConfigurationListsVariables() {
        let config = NFCEnvironment.libnfcConfiguration(environment: ["LIBNFC_DEVICE": "pn532_uart:/dev/pts/3", "HOME": "/root"])
        XCTAssertEqual(config.variables, ["LIBNFC_DEVICE": "pn532_uart:/dev/pts/3"])
    }

    func testUdevRulesCoverEveryKnownReader() throws {
        let rules = try String(contentsOf: Self.repository.appendingPathComponent("udev/60-lockbench-nfc.rules"), encoding: .utf8)
        for reader in NFCEnvironment.knownReaders {
            let line = String(format: "ATTRS{idVendor}==\"%04x\", ATTRS{idProduct}==\"%04x\", MODE=\"0660\", GROUP=\"plugdev\"", reader.vendorID, reader.productID)
            XCTAssertTrue(rules.contains(line), "rules miss \(reader.name): \(line)")
        }
        let blacklist = try String(contentsOf: Self.repository.appendingPathComponent("udev/blacklist-libnfc.conf"), encoding: .utf8)
        for module in NFCEnvironment.conflictingModules { XCTAssertTrue(blacklist.contains("blacklist \(module)\n")) }
    }

    private func install(_ args: [String]) throws -> (Int32, String) {
        let r = try LockBenchProcess.run([Self.repository.appendingPathComponent("udev/install.sh").path] + args,
                                         executable: URL(fileURLWithPath: "/bin/bash"), timeout: 120)
        return (r.status, r.stdout + r.stderr)
    }

    func testInstallScriptIsIdempotentAndUninstalls() throws {
        let root = try temporaryPath()
        let (first, out1) = try install(["--root", root])
        XCTAssertEqual(first, 0, out1)
        XCTAssertTrue(out1.contains("udev rules (group plugdev for ACR122U, PN533, SCL3711, …) installed"), out1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(root)/etc/udev/rules.d/60-lockbench-nfc.rules"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(root)/etc/modprobe.d/blacklist-libnfc.conf"))
        let (second, out2) = try install(["--root", root])
        XCTAssertEqual(second, 0, out2)
        XCTAssertTrue(out2.contains("already installed") && out2.contains("nothing to do"), out2)
        let (third, out3) = try install(["--root", root, "--uninstall"])
        XCTAssertEqual(third, 0, out3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(root)/etc/udev/rules.d/60-lockbench-nfc.rules"))
        let (dry, out4) = try install(["--dry-run"])
        XCTAssertEqual(dry, 0, out4)
        XCTAssertTrue(out4.contains("would run: install -m 0644"), out4)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/etc/udev/rules.d/60-lockbench-nfc.rules"), "a dry run changes nothing")
    }
}
