import Foundation
import PCSC

/// pcscd for the PC/SC tests: used when it runs (CI's `.ci/run` starts it), started otherwise as
/// `pcscd -f -x` (foreground, exits by itself after 60 s idle, so nothing lingers). The packages
/// must be installed: a missing one fails the test with the install line, never skips it.
public enum PCSCDaemon {
    public static func ensureRunning(offering reader: String) throws {
        if offers(reader) { return }
        guard let pcscd = ["/usr/sbin/pcscd", "/usr/local/sbin/pcscd"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw MissingTool("pcscd is not installed: sudo apt-get install pcscd libpcsclite-dev vsmartcard-vpcd")
        }
        if (try? PCSCContext()) == nil {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pcscd)
            process.arguments = ["-f", "-x"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if offers(reader) { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw MissingTool("pcscd does not offer \"\(reader)\": is vsmartcard-vpcd installed (sudo apt-get install vsmartcard-vpcd) and pcscd restarted?")
    }

    private static func offers(_ reader: String) -> Bool {
        ((try? PCSCContext().readers()) ?? []).contains(reader)
    }
}
