import Foundation
import LockRuntime
@testable import Scenario
import TrustPhone
import XCTest

/// An approval's unlock command at real locks, beside a key the phone already holds: the command
/// opens its door alone, and the phone's other key keeps working through the 91/92 step-up (the
/// phone names its documents' newest signed times in AUTH1; a lock holding older ones asks for
/// step-up once, then has them) — the approval neither refuses the other door nor makes it step up
/// on every tap.
final class ApprovalAtTheLockTests: XCTestCase {
    func testTheUnlockCommandOpensItsDoorAloneAndTheOtherKeyKeepsWorking() async throws {
        let world = try World(clockMode: .virtual, transport: MemoryTap())
        func run(_ lines: String) async throws {
            for step in try ScenarioScript(parsing: lines, name: "approval-at-the-lock").steps { try await world.run(step.command) }
        }
        func tap(_ lock: String) async throws -> (granted: Bool, stepUp: Bool, code: String?) {
            let bob = try await world.phone("bob"), l = try await world.lock(lock)
            let responder = await world.responder(bob)
            let o = try world.transport.tap(responder, on: l.service)
            return (o.decision.isGrant, o.stepUp, o.decision.refusal?.code)
        }
        do {
            try await run("""
            clock set 2026-03-02T08:00:00Z
            lock front
            lock back
            lock side
            phone alice user alice
            phone bob user bob
            grant add ga alice front
            grant add gb bob back
            phone alice login
            phone bob login
            """)
            // Bob's own key at the back door: step-up once, then the lock has it.
            var t = try await tap("back")
            XCTAssertTrue(t.granted && t.stepUp, "\(t)")
            t = try await tap("back")
            XCTAssertTrue(t.granted && !t.stepUp, "the back door holds bob's key now: \(t)")
            t = try await tap("front")
            XCTAssertFalse(t.granted, "no approval yet")

            try await run("""
            clock advance 10s
            unlock request bob from alice front
            phone alice approve
            expect bob request approved
            expect bob unlocks 1
            """)
            // The command opens the front door, not the back door's neighbour.
            t = try await tap("front")
            XCTAssertTrue(t.granted, "the approved door opens: \(t)")
            t = try await tap("side")
            XCTAssertFalse(t.granted, "the command names the front door alone: \(t)")
            // The back door: bob's phone now names a newer signed time (the command's) than the back
            // door holds, so it asks for step-up — once; bob's key still opens it, every time.
            t = try await tap("back")
            XCTAssertTrue(t.granted, "bob's own key still opens the back door beside the command: \(t)")
            for i in 0..<3 {
                t = try await tap("back")
                XCTAssertTrue(t.granted, "tap \(i): \(t)")
                XCTAssertFalse(t.stepUp, "tap \(i) at the back door stepped up again: the command must not make it step up forever")
            }
            t = try await tap("front")
            XCTAssertTrue(t.granted && !t.stepUp, "the front door holds the command now: \(t)")

            // Past the command's minute (and the lock's leeway): the front door refuses it; the back door
            // is unaffected by the expired document the phone may still hold.
            try await run("clock advance 10m")
            t = try await tap("front")
            XCTAssertFalse(t.granted, "the command expired: \(t)")
            t = try await tap("back")
            XCTAssertTrue(t.granted, "the back key is unaffected by the expired command: \(t)")
        } catch {
            await world.shutdown()
            throw error
        }
        await world.shutdown()
    }
}
