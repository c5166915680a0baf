import ArgumentParser
import Foundation
import LockRuntime
import NFC
#if canImport(Glibc)
import Glibc
#endif

/// `lockbench doctor`: checks what LockBench needs from this machine and prints the exact
/// command that fixes each problem. Exit 0 when nothing is a problem, 1 otherwise.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check this machine for NFC readers, permissions, kernel drivers, libnfc configuration, pcscd and Bluetooth.",
        discussion: """
        Each check is ok, warning (worth knowing, not blocking) or problem (with the command that fixes \
        it). Exit code 0 when there is no problem, 1 otherwise.
        """
    )

    @Flag(name: .long, help: "JSON output: {ok, checks: [{id, title, status, detail, fix}]}.")
    var json = false

    func run() throws {
        let checks = Doctor.runAll()
        let ok = !checks.contains { $0.status == .problem }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            emitLine(String(decoding: try encoder.encode(Doctor.Report(ok: ok, checks: checks)), as: UTF8.self))
        } else {
            for c in checks {
                let mark = c.status == .ok ? "ok     " : c.status == .warning ? "warning" : "PROBLEM"
                emitLine("[\(mark)] \(c.title): \(c.detail)")
                if let fix = c.fix { emitLine("          fix: \(fix)") }
            }
            emitLine(ok ? "No problems found." : "Problems found: run the fix commands above.")
        }
        if !ok { throw ExitCode(ExitCodes.negative) }
    }
}

enum Doctor {
    enum Status: String, Codable { case ok, warning, problem }

    struct Check: Codable, Equatable {
        var id: String
        var title: String
        var status: Status
        var detail: String
        var fix: String?
    }

    struct Report: Codable {
        var ok: Bool
        var checks: [Check]
    }

    static func runAll() -> [Check] {
        var checks: [Check] = []
        checks.append(Check(id: "libnfc", title: "libnfc", status: .ok, detail: "libnfc \(LibNFC.version) loaded", fix: nil))
        let tools = ["nfc-list", "nfc-poll"].filter { name in
            ["/usr/bin", "/usr/local/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
        }
        checks.append(tools.count == 2
            ? Check(id: "libnfc-tools", title: "libnfc tools", status: .ok, detail: "nfc-list and nfc-poll installed", fix: nil)
            : Check(id: "libnfc-tools", title: "libnfc tools", status: .warning, detail: "nfc-list/nfc-poll not installed (useful to check a reader by hand)",
                    fix: "sudo apt-get install libnfc-bin libnfc-examples"))

        let config = NFCEnvironment.libnfcConfiguration()
        var configDetail = config.files.isEmpty ? "no /etc/nfc/libnfc.conf or devices.d entries" : "reads \(config.files.joined(separator: ", "))"
        if !config.variables.isEmpty {
            configDetail += "; environment: " + config.variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        checks.append(Check(id: "libnfc-config", title: "libnfc configuration", status: .ok, detail: configDetail, fix: nil))

        // Readers libnfc finds (configured ones and USB autoscan).
        var devices: [String] = []
        if let context = try? NFCContext() { devices = context.listDevices() }
        checks.append(devices.isEmpty
            ? Check(id: "nfc-devices", title: "NFC readers", status: .problem,
                    detail: "libnfc finds no reader (USB readers are found by themselves; serial and virtual readers need LIBNFC_DEVICE or libnfc.conf)",
                    fix: "plug in a reader (ACR122U, PN533, SCL3711), or run: lockbench nfc virtual-reader --link /tmp/lockbench-nfc & export LIBNFC_DEVICE=pn532_uart:/tmp/lockbench-nfc")
            : Check(id: "nfc-devices", title: "NFC readers", status: .ok, detail: "libnfc finds \(devices.joined(separator: ", "))", fix: nil))

        let usb = NFCEnvironment.usbReaders()
        if usb.isEmpty {
            checks.append(Check(id: "usb-readers", title: "USB NFC readers", status: .ok,
                                detail: "none plugged in (known: \(NFCEnvironment.knownReaders.map { "\($0.usbID) \($0.name)" }.joined(separator: ", ")))", fix: nil))
        } else {
            for r in usb {
                if let driver = r.kernelDriver, !driver.hasPrefix("usb") {
                    checks.append(Check(id: "usb-reader-driver", title: "\(r.model.name) (\(r.model.usbID))", status: .problem,
                                        detail: "claimed by the kernel driver \(driver); libnfc cannot open it", fix: NFCEnvironment.blacklistFix))
                } else if !r.accessible {
                    checks.append(Check(id: "usb-reader-permissions", title: "\(r.model.name) (\(r.model.usbID))", status: .problem,
                                        detail: "\(r.devicePath) is not readable and writable by this user", fix: NFCEnvironment.udevFix))
                } else {
                    checks.append(Check(id: "usb-reader", title: "\(r.model.name) (\(r.model.usbID))", status: .ok,
                                        detail: "\(r.devicePath), usable; connstring \(r.model.driver)", fix: nil))
                }
            }
        }

        let modules = NFCEnvironment.loadedConflictingModules()
        checks.append(modules.isEmpty
            ? Check(id: "kernel-modules", title: "kernel NFC drivers", status: .ok, detail: "pn533_usb, pn533, nfc not loaded", fix: nil)
            : Check(id: "kernel-modules", title: "kernel NFC drivers", status: .problem,
                    detail: "\(modules.joined(separator: ", ")) loaded: they claim PN533/ACR122 readers before libnfc", fix: NFCEnvironment.blacklistFix))

        let rules = ["/etc/udev/rules.d/60-lockbench-nfc.rules", "/lib/udev/rules.d/60-lockbench-nfc.rules",
                     "/etc/udev/rules.d/93-pn53x.rules", "/lib/udev/rules.d/93-pn53x.rules", "/lib/udev/rules.d/69-libnfc.rules", "/usr/lib/udev/rules.d/69-libnfc.rules"]
            .filter { FileManager.default.fileExists(atPath: $0) }
        let blacklist = FileManager.default.fileExists(atPath: "/etc/modprobe.d/blacklist-libnfc.conf")
        checks.append(Check(id: "udev-rules", title: "udev rules", status: rules.isEmpty || !blacklist ? .warning : .ok,
                            detail: (rules.isEmpty ? "no NFC reader udev rules installed" : "installed: \(rules.joined(separator: ", "))")
                                + (blacklist ? "; pn533 blacklist installed" : "; no pn533 blacklist"),
                            fix: rules.isEmpty || !blacklist ? "sudo ./udev/install.sh" : nil))

        let ptmx = access("/dev/ptmx", R_OK | W_OK) == 0
        checks.append(ptmx
            ? Check(id: "pty", title: "virtual reader", status: .ok, detail: "/dev/ptmx usable: `lockbench nfc virtual-reader` can run", fix: nil)
            : Check(id: "pty", title: "virtual reader", status: .problem, detail: "/dev/ptmx is not usable, so no pseudo-terminal for the virtual reader",
                    fix: "sudo mount -t devpts devpts /dev/pts   (in a container: run it with /dev/pts mounted)"))

        checks += pcscChecks()
        checks += bluetoothChecks()
        return checks
    }

    /// BlueZ: kernel Bluetooth (AF_BLUETOOTH), adapters in /sys/class/bluetooth, rfkill blocks.
    static func bluetoothChecks() -> [Check] {
        var checks: [Check] = []
        // socket(AF_BLUETOOTH = 31, SOCK_RAW, BTPROTO_HCI = 1): EAFNOSUPPORT when the kernel has no Bluetooth.
        let fd = socket(31, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 1)
        let err = errno
        if fd >= 0 { close(fd) }
        if fd < 0 && (err == EAFNOSUPPORT || err == EPROTONOSUPPORT) {
            checks.append(Check(id: "bluetooth-kernel", title: "kernel Bluetooth", status: .problem,
                                detail: "no AF_BLUETOOTH sockets: the kernel has no Bluetooth support loaded",
                                fix: "sudo modprobe bluetooth   (no kernel Bluetooth, e.g. in a container: use the virtual controllers, pip install bumble, over the tcp:/unix: H4 transports)"))
        } else {
            checks.append(Check(id: "bluetooth-kernel", title: "kernel Bluetooth", status: .ok, detail: "AF_BLUETOOTH available", fix: nil))
        }
        let adapters = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? []).filter { $0.hasPrefix("hci") }.sorted()
        checks.append(adapters.isEmpty
            ? Check(id: "bluetooth-adapters", title: "Bluetooth adapters", status: .problem,
                    detail: "no adapter in /sys/class/bluetooth",
                    fix: "plug in a USB Bluetooth dongle and check `btmgmt info`; without hardware use H4 over tcp: to Bumble's virtual controllers")
            : Check(id: "bluetooth-adapters", title: "Bluetooth adapters", status: .ok,
                    detail: "\(adapters.joined(separator: ", ")); for the HCI user channel power it down in bluetoothd first: sudo btmgmt --index \(adapters[0].dropFirst(3)) power off",
                    fix: nil))
        let rfkill = "/sys/class/rfkill"
        for entry in ((try? FileManager.default.contentsOfDirectory(atPath: rfkill)) ?? []).sorted() {
            let type = (try? String(contentsOfFile: "\(rfkill)/\(entry)/type", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            let soft = (try? String(contentsOfFile: "\(rfkill)/\(entry)/soft", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            if type == "bluetooth" && soft == "1" {
                checks.append(Check(id: "bluetooth-rfkill", title: "Bluetooth rfkill", status: .problem,
                                    detail: "\(entry) is soft-blocked", fix: "sudo rfkill unblock bluetooth"))
            }
        }
        return checks
    }
}
