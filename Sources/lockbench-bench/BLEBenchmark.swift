import BLE
import ByteCore
import Foundation
import Glibc

/// `lockbench-bench ble [--count N] [--echo N] [--lock SPEC --phone SPEC]`: connection to
/// APDU exchange complete, median over N unlocks of the Swift phone on the Swift lock over
/// Bumble's virtual controllers, with the bare link's round trip (an L2CAP echo on an open
/// credit-based channel) measured in the same run as the baseline.
enum BLEBenchmark {
    static func run(_ arguments: [String]) -> Int32 {
        var count = 100, echoes = 200
        var lockSpec: String?, phoneSpec: String?
        var controller = "bumble"
        var i = 0
        while i < arguments.count {
            let value = i + 1 < arguments.count ? arguments[i + 1] : ""
            switch arguments[i] {
            case "--count": count = Int(value) ?? count; i += 2
            case "--echo": echoes = Int(value) ?? echoes; i += 2
            case "--lock": lockSpec = value; i += 2
            case "--phone": phoneSpec = value; i += 2
            case "--controller": controller = value; i += 2
            default:
                print("usage: lockbench-bench ble [--count N] [--echo N] [--controller bumble|rootcanal] [--lock tcp:HOST:PORT --phone tcp:HOST:PORT]")
                return 2
            }
        }
        var controllers: Process?
        if lockSpec == nil || phoneSpec == nil {
            let ports = (freePort(), freePort())
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            if controller == "rootcanal" {
                // RootCanal: one controller per TCP connection on its HCI port; models connection
                // events. Its binary runs directly so that killing it leaves no orphan.
                guard let binary = rootCanalBinary() else { print("rootcanal is not installed (pip install rootcanal==1.10.0)"); return 3 }
                p.executableURL = URL(fileURLWithPath: binary)
                p.arguments = ["-hci_port", "\(ports.0)", "-link_port", "\(freePort())",
                               "-link_ble_port", "\(freePort())", "-test_port", "\(freePort())"]
                lockSpec = "tcp:127.0.0.1:\(ports.0)"
                phoneSpec = lockSpec
            } else {
                p.arguments = ["python3", "-m", "bumble.apps.controllers", "tcp-server:127.0.0.1:\(ports.0)", "tcp-server:127.0.0.1:\(ports.1)"]
                lockSpec = "tcp:127.0.0.1:\(ports.0)"
                phoneSpec = "tcp:127.0.0.1:\(ports.1)"
            }
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            do { try p.run() } catch {
                print("cannot start the \(controller) controller (pip install bumble / rootcanal==1.10.0): \(error)")
                return 3
            }
            controllers = p
        }
        defer {
            if let p = controllers, p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        }
        do {
            var lockConfig = BLELock.Configuration(transport: try TransportSpec(parsing: lockSpec!))
            lockConfig.echoPSM = AliroBLE.echoPSM
            let lock = try BLELock(configuration: lockConfig, transaction: EchoFlow.lockTransaction())
            lock.start()
            defer { lock.stop() }
            guard lock.waitUntilAdvertising(timeout: 20) else { print("the lock's controller did not come up"); return 3 }
            let phone = try BLEPhone(configuration: BLEPhone.Configuration(transport: try TransportSpec(parsing: phoneSpec!)))
            try phone.start(timeout: 20)
            defer { phone.stop() }

            // Baseline: bare L2CAP echo round trips on one open credit-based channel.
            let session = try phone.connectToLock()
            let echo = try session.openChannel(psm: AliroBLE.echoPSM)
            let probe = [UInt8](repeating: 0x5A, count: 20)
            var rtts = [Double]()
            for _ in 0..<echoes {
                let t0 = Date()
                try echo.send(probe)
                guard try echo.receive(timeout: 5) == probe else { print("echo mismatch"); return 1 }
                rtts.append(Date().timeIntervalSince(t0) * 1000)
            }
            echo.close()
            session.disconnect()

            // Unlocks: connection complete → discovery → channel → APDU exchange complete.
            var total = [Double](), toChannel = [Double](), exchange = [Double]()
            var failures = 0
            for _ in 0..<count {
                do {
                    let o = try phone.unlock(with: EchoCredential())
                    guard o.completion == EchoFlow.granted else {
                        failures += 1
                        FileHandle.standardError.write(Data("unlock \(failures): completion \(o.completion.map { Hex.encode($0) } ?? "none") after \(o.commandsAnswered) commands\n".utf8))
                        continue
                    }
                    total.append(o.connectToCompleted * 1000)
                    toChannel.append(o.connectToChannel * 1000)
                    exchange.append((o.connectToCompleted - o.connectToChannel) * 1000)
                } catch {
                    failures += 1
                    FileHandle.standardError.write(Data("unlock \(failures) failed: \(error)\n".utf8))
                }
            }
            print("BLE over \(controller == "rootcanal" ? "RootCanal" : "Bumble") virtual controllers (\(lockSpec!) ↔ \(phoneSpec!))")
            print(line("baseline: L2CAP echo round trip (20-byte SDU)", rtts))
            print(line("connection → APDU exchange complete (granted)", total))
            print(line("  connection → channel open (MTU, discovery, SPSM read, version write, CoC)", toChannel))
            print(line("  channel open → completed (SELECT + 2 APDUs + completed notification)", exchange))
            print("unlocks: \(total.count) granted, \(failures) failed")
            if let m = median(total), let e = median(rtts) {
                print(String(format: "ratio: unlock median = %.1f × echo median; goal ≤ 50 ms median: %@", m / e, m <= 50 ? "met" : "NOT met"))
            }
            return failures == 0 ? 0 : 1
        } catch let error as BLEError {
            print("BLE benchmark failed: \(error.reason)")
            return 3
        } catch {
            print("BLE benchmark failed: \(error)")
            return 3
        }
    }

    static func rootCanalBinary() -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import rootcanal.binaries as b; print(b.get_package_binary_resource_path('rootcanal'))"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        p.waitUntilExit()
        return p.terminationStatus == 0 && FileManager.default.isExecutableFile(atPath: text) ? text : nil
    }

    static func median(_ xs: [Double]) -> Double? {
        guard !xs.isEmpty else { return nil }
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func line(_ label: String, _ xs: [Double]) -> String {
        guard let m = median(xs) else { return "\(label): no samples" }
        let s = xs.sorted()
        return String(format: "%@: median %.2f ms, p90 %.2f ms, min %.2f ms, max %.2f ms (n=%d)",
                      label, m, s[min(s.count - 1, Int(Double(s.count) * 0.9))], s.first!, s.last!, s.count)
    }

    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }
}
