import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import SocketTransport

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "The whole offline unlock on this machine, no hardware: issuer, lock, phones, taps, audit log.",
        discussion: """
        Creates an issuer, a lock (a Schlage NDE on certified firmware 02.12.72) and phone credentials \
        in a temporary directory (or --directory), starts the lock on a virtual PN532 that the real \
        libnfc drives over a pseudo-terminal, and taps:
          alice, valid access document      → GRANTED
          bob, expired access document      → DENIED (expired)
          carol, carrying a revocation of alice's phone → GRANTED (revocation stored)
          alice again                       → DENIED (revoked)
        then prints the lock's audit log. Exit 0 when every tap got the expected decision.
        """
    )

    @Option(help: ArgumentHelp("Keep the demo's files (keys, documents, lock configuration, state) here.", valueName: "dir"))
    var directory: String?

    @Flag(help: "Print lock events as JSON lines.")
    var json = false

    func run() throws {
        let dir: URL
        if let directory {
            dir = URL(fileURLWithPath: directory)
        } else {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-demo-\(ProcessInfo.processInfo.processIdentifier)")
        }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let json = self.json
        // With --json every line is a JSON object: the narration (kind "step"), the lock's events, the summary.
        let scenario = DemoScenario(directory: dir, say: { emitLine(json ? KeyFiles.compactJSON(["kind": "step", "message": $0]) : "» " + $0) },
                                    event: { emitLine(json ? $0.json : "  " + $0.line) })
        let result: (steps: [DemoScenario.Step], auditLog: String)
        do { result = try scenario.run() } catch {
            throw UserError(message: "demo failed: \(error)", code: ExitCodes.environment)
        }
        if json {
            struct Step: Encodable { var title: String; var passed: Bool; var granted: Bool?; var reason: String?; var expected: String }
            struct Summary: Encodable { var kind = "summary"; var steps: [Step]; var passed: Bool; var directory: String; var stateDirectory: String }
            let steps = result.steps.map { s in
                Step(title: s.title, passed: s.passed, granted: s.outcome?.granted, reason: s.outcome?.reason?.code,
                     expected: s.expected.map { "denied: \($0.code)" } ?? "granted")
            }
            emitLine(KeyFiles.compactJSON(Summary(steps: steps, passed: result.steps.allSatisfy(\.passed), directory: dir.path,
                                                  stateDirectory: dir.path + "/state")))
            if !result.steps.allSatisfy(\.passed) { throw ExitCode(ExitCodes.negative) }
            return
        }
        emitLine("")
        emitLine("Summary:")
        for step in result.steps {
            let got = step.outcome.map { $0.granted ? "GRANTED" : "DENIED (\($0.reason?.code ?? "?"))" } ?? "no decision"
            let want = step.expected.map { "DENIED (\($0.code))" } ?? "GRANTED"
            emitLine("  \(step.passed ? "ok  " : "FAIL") \(step.title): \(got)" + (step.passed ? "" : ", expected \(want)"))
        }
        emitLine("")
        emitLine("Audit log (\(dir.path)/state):")
        emitLine(result.auditLog.trimmingCharacters(in: .newlines))
        emitLine("")
        emitLine("Files kept in \(dir.path): try `lockbench audit verify --config \(dir.path)/lock.json`.")
        if !result.steps.allSatisfy(\.passed) { throw ExitCode(ExitCodes.negative) }
    }
}
