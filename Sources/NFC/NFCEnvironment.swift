import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the machine around libnfc looks like: USB readers on the bus and whether this user may
/// open them, kernel drivers that grab them, libnfc configuration. Reads /sys, /proc, /etc and
/// the environment only; used to turn a failed `nfc_open` into advice, and by `lockbench doctor`.
public enum NFCEnvironment {
    /// A USB reader model libnfc 1.8.0 drives (its `acr122_usb` and `pn53x_usb` driver tables).
    public struct KnownReader: Sendable, Equatable {
        public let vendorID: UInt16
        public let productID: UInt16
        public let name: String
        /// The libnfc driver, which is also the connstring prefix.
        public let driver: String
        public var usbID: String { String(format: "%04x:%04x", vendorID, productID) }
    }

    /// From libnfc 1.8.0 `drivers/acr122_usb.c` (`acr122_usb_supported_devices`) and
    /// `drivers/pn53x_usb.c` (`pn53x_usb_supported_devices`).
    public static let knownReaders: [KnownReader] = [
        KnownReader(vendorID: 0x072F, productID: 0x2200, name: "ACS ACR122U", driver: "acr122_usb"),
        KnownReader(vendorID: 0x072F, productID: 0x90CC, name: "Touchatag (ACR122U)", driver: "acr122_usb"),
        KnownReader(vendorID: 0x072F, productID: 0x2214, name: "ACS ACR1222", driver: "acr122_usb"),
        KnownReader(vendorID: 0x04CC, productID: 0x0531, name: "Philips PN531", driver: "pn53x_usb"),
        KnownReader(vendorID: 0x04CC, productID: 0x2533, name: "NXP PN533", driver: "pn53x_usb"),
        KnownReader(vendorID: 0x04E6, productID: 0x5591, name: "SCM SCL3711", driver: "pn53x_usb"),
        KnownReader(vendorID: 0x04E6, productID: 0x5594, name: "SCM SCL3712", driver: "pn53x_usb"),
        KnownReader(vendorID: 0x054C, productID: 0x0193, name: "Sony PN531", driver: "pn53x_usb"),
        KnownReader(vendorID: 0x1FD3, productID: 0x0608, name: "ASK LoGO", driver: "pn53x_usb"),
        KnownReader(vendorID: 0x054C, productID: 0x02E1, name: "Sony RC-S360 PaSoRi", driver: "pn53x_usb"),
    ]

    /// Kernel modules that claim these readers before libnfc can (the kernel's own NFC stack).
    /// The drivers libnfc 1.8.0 has (`libnfc/drivers/*.c`, `nfc.c` `nfc_drivers`), which are
    /// also the connstrings' first word: a connstring naming another is a typo, not a missing reader.
    public static let libnfcDrivers = ["acr122_usb", "acr122_pcsc", "acr122s", "arygon", "pcsc", "pn53x_usb",
                                       "pn532_uart", "pn532_spi", "pn532_i2c", "pn71xx"]

    /// The driver a connstring names (`pn532_uart` in `pn532_uart:/dev/ttyUSB0`).
    public static func driver(of connstring: String) -> String {
        String(connstring.prefix { $0 != ":" })
    }

    public static let conflictingModules = ["pn533_usb", "pn533", "nfc"]

    /// A known reader found on the USB bus.
    public struct USBReader: Sendable, Equatable {
        public let model: KnownReader
        /// The sysfs name, e.g. "1-2".
        public let sysfsName: String
        /// `/dev/bus/usb/BBB/DDD`.
        public let devicePath: String
        public let accessible: Bool
        /// Kernel driver bound to its interface (e.g. "pn533_usb"), nil when none.
        public let kernelDriver: String?
    }

    /// Scans `/sys/bus/usb/devices` for known readers.
    public static func usbReaders(sysfs: String = "/sys/bus/usb/devices") -> [USBReader] {
        let fm = FileManager.default
        guard let entries = try? fm.contentsOfDirectory(atPath: sysfs) else { return [] }
        var found: [USBReader] = []
        for entry in entries.sorted() where !entry.contains(":") {
            let dir = "\(sysfs)/\(entry)"
            guard let v = read("\(dir)/idVendor").flatMap({ UInt16($0, radix: 16) }),
                  let p = read("\(dir)/idProduct").flatMap({ UInt16($0, radix: 16) }),
                  let model = knownReaders.first(where: { $0.vendorID == v && $0.productID == p }) else { continue }
            let bus = Int(read("\(dir)/busnum") ?? "") ?? 0, dev = Int(read("\(dir)/devnum") ?? "") ?? 0
            let node = String(format: "/dev/bus/usb/%03d/%03d", bus, dev)
            var driver: String? = nil
            if let interfaces = try? fm.contentsOfDirectory(atPath: dir) {
                for i in interfaces where i.hasPrefix("\(entry):") {
                    if let target = try? fm.destinationOfSymbolicLink(atPath: "\(dir)/\(i)/driver") {
                        driver = (target as NSString).lastPathComponent
                    }
                }
            }
            found.append(USBReader(model: model, sysfsName: entry, devicePath: node,
                                   accessible: access(node, R_OK | W_OK) == 0, kernelDriver: driver))
        }
        return found
    }

    /// Loaded modules among `conflictingModules`, from `/proc/modules`.
    public static func loadedConflictingModules(procModules: String = "/proc/modules") -> [String] {
        guard let text = try? String(contentsOfFile: procModules, encoding: .utf8) else { return [] }
        let loaded = Set(text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        return conflictingModules.filter { loaded.contains($0) }
    }

    /// libnfc's configuration sources: the files it reads and the LIBNFC_* variables set.
    public static func libnfcConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) -> (files: [String], variables: [String: String]) {
        var files: [String] = []
        let fm = FileManager.default
        if fm.fileExists(atPath: "/etc/nfc/libnfc.conf") { files.append("/etc/nfc/libnfc.conf") }
        if let extra = try? fm.contentsOfDirectory(atPath: "/etc/nfc/devices.d") {
            files += extra.filter { $0.hasSuffix(".conf") }.sorted().map { "/etc/nfc/devices.d/\($0)" }
        }
        return (files, environment.filter { $0.key.hasPrefix("LIBNFC_") })
    }

    static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Advice

    public static let udevFix = "sudo ./udev/install.sh   (installs the plugdev udev rules and the pn533 blacklist), then: sudo usermod -aG plugdev $USER, log in again and re-plug the reader"
    public static let blacklistFix = "sudo modprobe -r pn533_usb pn533 nfc   (and make it permanent: sudo ./udev/install.sh installs /etc/modprobe.d/blacklist-libnfc.conf)"

    /// Turns a NULL from `nfc_open` into an error that says what to do.
    public static func diagnoseOpenFailure(connstring: String?, sysfs: String = "/sys/bus/usb/devices",
                                           procModules: String = "/proc/modules") -> NFCError {
        let parts = (connstring ?? "").split(separator: ":", maxSplits: 1).map(String.init)
        let driver = parts.first ?? ""
        switch driver {
        case "pn532_uart", "arygon", "acr122s", "pn532_spi", "pn532_i2c":
            guard parts.count > 1 else {
                return NFCError(.noDevice, "\(driver) needs a port: \(driver):/dev/ttyUSB0. \(NFCError.connstringExamples)")
            }
            let path = String(parts[1].split(separator: ":").first ?? "")  // drop an optional :speed
            return diagnoseSerial(driver: driver, path: path)
        case "", "acr122_usb", "pn53x_usb":
            let readers = usbReaders(sysfs: sysfs).filter { driver.isEmpty || $0.model.driver == driver }
            guard !readers.isEmpty else {
                let what = connstring.map { "No reader answers at \"\($0)\"" } ?? "libnfc found no reader"
                return NFCError(.noDevice, "\(what): no supported USB reader is plugged in (lsusb should list e.g. 072f:2200 for an ACR122U). \(NFCError.connstringExamples)")
            }
            if let busy = readers.first(where: { $0.kernelDriver != nil && !($0.kernelDriver ?? "").hasPrefix("usb") }) {
                return NFCError(.deviceBusy, "\(busy.model.name) at \(busy.devicePath) is claimed by the kernel driver \(busy.kernelDriver!); libnfc cannot open it. Fix: \(blacklistFix)")
            }
            if let locked = readers.first(where: { !$0.accessible }) {
                return NFCError(.permissionDenied, "\(locked.model.name) at \(locked.devicePath): permission denied. Fix: \(udevFix)")
            }
            let modules = loadedConflictingModules(procModules: procModules)
            if !modules.isEmpty {
                return NFCError(.deviceBusy, "the kernel NFC modules \(modules.joined(separator: ", ")) are loaded and may hold the reader. Fix: \(blacklistFix)")
            }
            return NFCError(.openFailed, "\(readers[0].model.name) is plugged in but libnfc could not open it; re-plug it, or see LIBNFC_LOG_LEVEL=3 output")
        default:
            return NFCError(.noDevice, "unknown libnfc driver \"\(driver)\" in connstring \"\(connstring ?? "")\". \(NFCError.connstringExamples)")
        }
    }

    static func diagnoseSerial(driver: String, path: String) -> NFCError {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let hint = path.hasPrefix("/dev/pts/") || !path.hasPrefix("/dev/")
                ? "is the virtual reader running? Start one with `lockbench nfc virtual-reader` and use the connstring it prints."
                : "is the adapter plugged in? (ls /dev/ttyUSB* /dev/ttyACM*)"
            return NFCError(.noDevice, "\(path) does not exist: \(hint) \(NFCError.connstringExamples)")
        }
        guard access(path, R_OK | W_OK) == 0 else {
            return NFCError(.permissionDenied, "\(path): permission denied. Fix: sudo usermod -aG dialout $USER (serial ports belong to group dialout), then log in again")
        }
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        if fd < 0 && errno == EBUSY {
            return NFCError(.deviceBusy, "\(path) is in use by another program (a virtual reader serves one client at a time); stop the other client first")
        }
        if fd >= 0 { _ = close(fd) }
        return NFCError(.openFailed, "no PN532 answered on \(path) (\(driver)): wrong port or speed, or another program is talking to it; try LIBNFC_LOG_LEVEL=3 to see the frames")
    }
}
