import Foundation
import Push

import TrustPhone

extension World {
    /// The wake-up application every scenario has.
    static let wakeUpApp = "lockbench"

    func addPush(_ phone: VirtualPhone) throws {
        let push = try PhonePush(phone: phone, relay: relay, notifier: notifier)
        let wakeUp = self.wakeUp
        push.readExplicitly = { app, sp in
            guard let path = try? WakeUpPath(parsing: sp), let value = try? wakeUp.read(app: app, path: path, token: nil) else { return nil }
            return value.encoded()
        }
        // Wake-up device id refresh: subscribe the new id, then unsubscribe the old (the tutorial's order).
        push.onTokenRotation = { old, new in try? wakeUp.refreshDevice(app: World.wakeUpApp, from: old, to: new) }
        pushes[phone.id] = push
    }

    func push(_ name: String) throws -> PhonePush {
        guard let p = pushes[name] else { throw ScenarioError(line: 0, "no phone \"\(name)\"; declare it with: phone \(name) user USER") }
        return p
    }

    func run(_ line: PushLine) async throws {
        switch line {
        case .faults(let drop, let delay, let throttle, let reset):
            var f = reset ? PushFaults() : relay.faults
            if let drop { f.dropPercent = drop }
            if let delay { f.delay = delay }
            if let throttle { f.backgroundPerHour = throttle }
            relay.faults = f
        case .appState(let name, let state):
            let p = try push(name)
            if state == .forceQuit { p.forceQuit() } else { p.setState(state) }
            if state == .foreground, p.phone.isLoggedIn {
                // Opening the app polls (Tapkey: poll whenever updates are expected).
                await p.phone.poll(trigger: .manual)
            }
        case .rotateToken(let name):
            try await push(name).rotateToken()
        case .subscribe(let name, let path, let mode, let token):
            let p = try push(name)
            try wakeUp.subscribe(app: Self.wakeUpApp, path: try WakeUpPath(parsing: path), device: p.token, token: token, mode: try WakeUpMode(parsing: mode))
        case .unsubscribe(let name, let path, let token):
            let p = try push(name)
            try wakeUp.unsubscribe(app: Self.wakeUpApp, path: try WakeUpPath(parsing: path), device: p.token, token: token)
        case .dataSet(let path, let json):
            try await wakeUp.write(app: Self.wakeUpApp, path: try WakeUpPath(parsing: path), value: try WakeUpValue(parsing: json))
        case .dataFill(let path, let key, let bytes):
            try await wakeUp.write(app: Self.wakeUpApp, path: try WakeUpPath(parsing: path), value: .object([key: .string(String(repeating: "x", count: bytes))]))
        case .dataDelete(let path):
            try await wakeUp.write(app: Self.wakeUpApp, path: try WakeUpPath(parsing: path), value: nil)
        case .wakeUpEnabled(let on):
            try await wakeUp.setEnabled(Self.wakeUpApp, on)
        case .wakeUpDelete:
            await wakeUp.deleteApplication(Self.wakeUpApp)
        case .wakeUpRule(let token, let paths):
            try await wakeUp.setReadRule(Self.wakeUpApp, token: token, paths: try paths.map { try WakeUpPath(parsing: $0) })
        case .send(let name, let data):
            let p = try push(name)
            do { try await relay.send(PushMessage(token: p.token, data: data)) } catch { throw StepFailure("the relay refused: \(error)") }
        case .expectPush(let word, let phoneName, let count):
            let tokens: Set<String>? = try phoneName.map { name in
                Set(try push(name).tokenHistory)
            }
            let records = relay.log.filter { tokens?.contains($0.token) ?? true }
            func matches(_ r: PushRecord) -> Bool {
                r.fate.rawValue == word || r.data["s"] == word || r.data["t"] == word || r.data["r"] == word
            }
            if let count {
                // Counted once per message: by its final fate, or by its fields on delivery.
                let n = records.filter { matches($0) && (PushRecord.Fate(rawValue: word) != nil || $0.fate == .delivered) }.count
                if n != count { throw StepFailure("expected \(count) push record(s) matching \(word), the relay has \(n): \(records.suffix(6).map(\.description).joined(separator: "; "))") }
                return
            }
            // The latest message (to that phone): its fate so far, or a field of it.
            guard let last = records.last else { throw StepFailure("no push was sent\(phoneName.map { " to \($0)" } ?? "")") }
            let same = records.filter { $0.id == last.id }
            guard same.contains(where: matches) else {
                throw StepFailure("expected the last push to be \(word); it was: \(same.map(\.description).joined(separator: "; "))")
            }
        }
    }
}
