import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Codecs
import Foundation
import LockRuntime
import SocketTransport
import NFC
import PhoneRadios
import PhoneSeam
import OfflineUnlock
import Push
import CommandLineSupport
import Synchronization
import Scenario
import TrustModel
import TrustPhone
import VirtualPN532

/// `lockbench phone run`: a virtual phone that keeps its keys current from a trust service and
/// serves them to locks.
struct PhoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "A virtual phone that logs in to a trust service, polls for keys and serves locks.",
        subcommands: [Run.self])

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Log in, keep the keys current and serve them to locks until stdin closes or `quit`.",
            discussion: """
            The phone logs in with its one-time code (`trust device add` printed it), polls at once (the \
            "after login" trigger), then every --poll-every (8h by default, Tapkey's background fetch; 0 \
            = never, as an app without background fetch), and on the `poll` command. Expired access \
            tokens are refreshed silently; when the login itself ends (30 days, a logout, a revoked \
            login) the phone re-authorizes without an administrator (RFC 8628): it prints "authorize" \
            with a user code (userCode=) and polls until the user approves it with `lockbench trust device \
            approve-code --code CODE` or from another enrolled phone of theirs (`login CODE` with a \
            code from `trust device enroll` works too); with --no-auto-recover it fails with \
            token_expired instead.

            It serves the lock on one transport: socket (listens on --port, as `credential serve`; \
            `lockbench lock transact` or a lock connects), pn532 (a virtual PN532 on a pty, or at \
            --link, with the phone in its field; its connstring is printed for the lock, e.g. \
            `lockbench lock run --nfc pn532_uart:PATH`; `remove` takes the phone out of the field and \
            `insert` or `tap` brings it back), vpicc (each `tap` puts the phone as a card in pcscd's \
            virtual reader "Virtual PCD 00 00" until the lock ended the transaction: `lockbench lock run \
            --nfc "pcsc:Virtual PCD 00 00"`), or ble (each `tap` command connects to the lock on \
            --ble and runs one transaction).

            Commands (stdin, one per line): poll, offline, online, show, login CODE, logout (the service \
            revokes the login, RFC 7009; the phone forgets its tokens and keys), tap (ble, pn532), \
            insert and remove (pn532), quit. After each transaction the phone uploads what the lock \
            showed it (door GROUP:SUB, the decision from its reader status, the revocation list the lock \
            asked for) to POST /v1/doors/{id}/reports and prints door-reported; `trust door show` reads it.

            Push approval (ForgeRock): `request-unlock USER LOCK [default|challenge|biometric] [TTL]` asks \
            USER's phones to let this phone open LOCK (GROUP[:SUB] hex or NAME.reader.json) and prints the \
            number to show for a challenge; on the approver's phone `fetch` brings the request, `inbox` \
            shows its message, context and numbers, `approve [N]` accepts (N: the number shown on the \
            requester's side) and `deny` refuses; `biometric match|no-match|none` and `passcode yes|no` \
            set what the simulated sensor answers. Once approved, `fetch` or `requests` on the requester \
            brings the signed unlock command, valid for a minute, which the phone presents to the lock. \
            `wallet-state [FIELD VALUE]` walks the Schlage guide's provisioning decision tree on the \
            phone's Wallet (FIELD: device, library, pass, watch, can-add).
            """)

        @Option(help: ArgumentHelp("The trust service, e.g. http://127.0.0.1:8480.", valueName: "url"))
        var trust: String
        @Option(help: ArgumentHelp("This phone's device id (as registered).", valueName: "id"))
        var device: String
        @Option(help: ArgumentHelp("The phone's credential key (PEM PKCS#8, from `key credential`).", valueName: "file"))
        var key: String
        @Option(help: ArgumentHelp("The one-time login code.", valueName: "code"))
        var code: String?
        @Option(name: [.customLong("trust-reader")], help: ArgumentHelp("A reader the phone trusts (NAME.reader.json or a lock configuration). Repeatable.", valueName: "file"))
        var trustReader: [String] = []
        @Option(name: .customLong("poll-every"), help: ArgumentHelp("Background poll interval; 0 = never.", valueName: "duration"))
        var pollEvery: String = "8h"
        @Flag(name: .customLong("no-auto-recover"), help: "On an expired login fail with token_expired instead of asking to re-authorize.")
        var noAutoRecover = false
        @Option(help: ArgumentHelp("socket, pn532, vpicc or ble.", valueName: "transport"))
        var transport: String = "socket"
        @Option(help: ArgumentHelp("With socket: the port to listen on (0: any, printed).", valueName: "n"))
        var port: Int = Int(SocketCredentialServer.defaultPort)
        @Option(name: .customLong("ble"), help: ArgumentHelp("With ble: the HCI transport (tcp:HOST:PORT, hci0, …).", valueName: "spec"))
        var ble: String?
        @Option(help: ArgumentHelp("With pn532: a stable path (symlink) for the pty, so the lock's connstring is known in advance.", valueName: "path"))
        var link: String?
        @Option(name: .customLong("push-relay"), help: ArgumentHelp(
            "Receive pushes through this relay (`lockbench push serve`'s URL): the phone opens a token there, registers it with the trust service (PUT /v1/push-token) after login, and polls whenever a trust push arrives. The trust service must run with --push-relay too.",
            valueName: "url"))
        var pushRelay: String?
        @Option(name: .customLong("wakeup-app"), help: ArgumentHelp("With --push-relay: the mobile wake-up application that `subscribe PATH [MODE]` and `unsubscribe PATH` address (`push serve --app NAME`).", valueName: "name"))
        var wakeupApp: String?
        @Flag(help: "Print events as JSON lines.")
        var json = false
        @Flag(name: .customLong("no-console"), help: "Do not read commands from stdin: run until SIGINT or SIGTERM (stdin is not read either when it is a terminal this process does not own, a background job).")
        var noConsole = false

        func validate() throws {
            guard ["socket", "pn532", "vpicc", "ble"].contains(transport) else { throw ValidationError("--transport is socket, pn532, vpicc or ble") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
            if transport == "ble" && ble == nil { throw ValidationError("--transport ble needs --ble SPEC (e.g. tcp:127.0.0.1:9101)") }
            if link != nil && transport != "pn532" { throw ValidationError("--link is for --transport pn532") }
            guard DurationText.parse(pollEvery) != nil || pollEvery == "0" else { throw ValidationError("--poll-every \"\(pollEvery)\" is not a duration like 8h (0 = never)") }
            guard !trustReader.isEmpty else { throw ValidationError("the phone must trust the lock's reader: --trust-reader NAME.reader.json (or the lock.json)") }
            if let relay = pushRelay, URL(string: relay).map({ ["http", "https"].contains($0.scheme ?? "") && $0.host != nil }) != true {
                throw ValidationError("--push-relay '\(relay)' is not an http(s) URL; e.g. --push-relay http://127.0.0.1:8490")
            }
        }

        func run() async throws {
            // The HTTP client must be shut down before it goes away, on every way out (a busy
            // --port throws before any request).
            let client = TrustClient(baseURL: trust, retryConnecting: false)
            do { try await serve(client: client) } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }

        private func serve(client: TrustClient) async throws {
            let signingKey = try KeyFiles.privateKey(key, what: "credential key")
            let readers = try trustReader.map { try SoftwarePhone.trustedReader($0, group: nil) }
            var options = VirtualPhone.Options()
            options.pollEvery = pollEvery == "0" ? 0 : DurationText.parse(pollEvery)!
            options.autoRecover = !noAutoRecover
            let phone = VirtualPhone(id: device, key: signingKey, client: client, clock: SystemClock(), options: options)
            let say: @Sendable (String, [String: String]) -> Void = { [json] text, fields in
                emitLine(json ? KeyFiles.compactJSON(fields.merging(["event": text]) { a, _ in a }) : text + (fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")))
            }
            // The radio, from the phone radios' registry.
            let spec: PhoneRadioSpec = switch transport {
            case "socket": .socket(host: "127.0.0.1", port: UInt16(port))
            case "pn532": .pn532(link: link)
            case "vpicc": .vpicc(host: "127.0.0.1", port: PhoneRadioSpec.vpcdPort)
            default: .ble(transport: ble!)
            }
            let responder = PhoneResponder(phone: phone, trusting: readers, interface: spec.interface)
            let radio: any PhoneRadio
            do { radio = try spec.radio() } catch {
                switch spec {
                case .socket: throw UserError(message: "cannot listen on 127.0.0.1:\(port): \(error); pick another --port", code: ExitCodes.environment)
                case .pn532: throw UserError(message: "cannot start the virtual PN532: \(error)", code: ExitCodes.environment)
                default:
                    if let e = error as? BLEError, e.code == .badTransportSpec { throw UserError(message: "--ble: \(e.reason)") }
                    throw UserError(message: "cannot start the phone's BLE controller \(ble ?? ""): \(error)", code: ExitCodes.environment)
                }
            }
            let stopRadio: () -> Void = { radio.close() }
            var radioTap: (@Sendable () -> String)?
            var field: ((Bool) -> String)?
            switch radio {
            case let socket as SocketPhoneRadio:
                say("listening", ["address": socket.address])
                // The lock connects when it will: one transaction per connection until the radio closes.
                Thread.detachNewThread {
                    while true { do { _ = try socket.present(responder, timeout: 1) } catch { return } }
                }
            case let pn532 as VirtualPN532PhoneRadio:
                // The phone starts in the field, as a phone held to the reader.
                do { try pn532.enter(responder) } catch {
                    throw UserError(message: "cannot start the virtual PN532: \(error)", code: ExitCodes.environment)
                }
                say("virtual-pn532", ["connstring": pn532.address])
                // The phone enters (true) or leaves (false) the field; a new uid per entry, so the
                // lock sees a new card each time.
                field = { enter in
                    guard enter else { pn532.leave(); return "removed" }
                    do { try pn532.enter(responder); return "inserted" } catch { return "failed: \(error)" }
                }
            default:
                // One `tap`, one presentation: BLE reports the lock's decision, vpicc only that the lock ended it.
                radioTap = {
                    do {
                        let tap = try radio.present(responder, timeout: 30)
                        // The radio's own word on the decision where it has one (BLE's completed
                        // notification); otherwise the reader status the phone saw.
                        if tap.ended || tap.granted != nil { responder.noteDoor(granted: tap.granted) }
                        if let granted = tap.granted { return granted ? "granted" : "denied" }
                        return tap.ended ? "ended" : "no transaction within 30 s"
                    } catch {
                        return "failed: \(error)"
                    }
                }
            }
            defer { stopRadio() }

            @Sendable func report(_ outcome: VirtualPhone.PollOutcome, _ trigger: PollTrigger) {
                switch outcome {
                case .updated(let k, let d, let s):
                    say("polled", ["trigger": trigger.rawValue, "keys": String(k), "deleted": String(d), "revocation": s.map(String.init) ?? "-"])
                case .unchanged: say("unchanged", ["trigger": trigger.rawValue])
                case .failed(let why): say("poll-failed", ["trigger": trigger.rawValue, "error": why])
                }
            }
            // Push: a token at the relay, registered with the service after each login; every trust
            // push makes the phone poll (the push is a hint, the poll the truth); others are not ours.
            let push = pushRelay.map { PushChannel(RelayInbox(baseURL: $0, token: RelayInbox.newToken(device: device))) }
            if let push {
                do { try await push.inbox.open() } catch {
                    throw UserError(message: "--push-relay \(push.inbox.baseURL): \(error)", code: ExitCodes.environment)
                }
                say("push-token", ["token": push.inbox.token])
            }
            @Sendable func registerPush() async {
                guard let push else { return }
                let token = push.inbox.token
                if let error = await phone.registerPushToken(token) { say("push-register-failed", ["error": error]) }
                else { say("push-registered", ["token": token]) }
            }
            // A login that ended: the user re-authorizes without an administrator (RFC 8628) — the
            // phone shows a user code and keeps polling the service in the background until it is
            // approved (`trust device approve-code`, or another phone of the user); `login CODE` still
            // works. With --no-auto-recover nothing of this runs: the poll fails with token_expired.
            let authorizing = OneAtATime()
            phone.reauthorize = { _ in
                guard authorizing.claim() else { return nil }
                Task {
                    let outcome = await phone.authorizeWithUserCode { pair in
                        say("authorize", ["userCode": pair.user_code, "verificationUri": pair.verification_uri, "expiresIn": String(pair.expires_in),
                                          "hint": "approve with `lockbench trust device approve-code --code \(pair.user_code)` or from another phone of this user; or type: login CODE"])
                    }
                    authorizing.release()
                    report(outcome, .login)
                    if phone.isLoggedIn { await registerPush() }
                }
                return nil
            }
            if let code {
                let outcome = await phone.login(code: code)
                report(outcome, .login)
                // A phone that cannot log in serves nothing: say so and stop, naming the URL tried.
                if !phone.isLoggedIn, case .failed(let why) = outcome {
                    let unreachable = why.hasPrefix("network:")
                    throw UserError(message: "login at \(client.baseURL)/v1/token failed: \(why)"
                                    + (unreachable ? "; start the trust service (`lockbench trust serve`) or fix --trust" : "; get a new code with `lockbench trust device enroll --device \(device)`"),
                                    code: unreachable ? ExitCodes.environment : ExitCodes.negative)
                }
                if phone.isLoggedIn { await registerPush() }
            }
            let approvalConsole = PhoneApprovalConsole(phone: phone, say: say)
            let receiver = push.map { push in
                Task {
                    while !Task.isCancelled {
                        let inbox = push.inbox
                        guard let messages = try? await inbox.collect(wait: 20) else {
                            try? await Task.sleep(for: .seconds(1)); continue
                        }
                        for m in messages {
                            if m["t"] != nil { say("wakeup", m); continue }   // a mobile wake-up message
                            if let id = m[ApprovalPush.identifier] {
                                // A request to answer, or the answer to ours: the push is a hint, the fetch the truth.
                                say("push", ["approval": id, "requester": m["requester"] ?? "-", "type": m["pushType"] ?? "-"])
                                _ = await approvalConsole.handle(["fetch"])
                                continue
                            }
                            guard m[TrustPushNotifier.identifier] == "1" else { say("push-not-handled", m); continue }
                            let trigger = m["trigger"].flatMap(PollTrigger.init(rawValue:)) ?? .manual
                            say("push", ["trigger": trigger.rawValue])
                            report(await phone.poll(trigger: trigger), trigger)
                        }
                    }
                }
            }
            let pushConsole = PhonePushConsole(device: device, channel: push, app: wakeupApp, say: say,
                                               register: { await registerPush() },
                                               poll: { if phone.isLoggedIn { report(await phone.poll(trigger: .manual), .manual) } })
            defer { receiver?.cancel() }
            // The background schedule.
            let scheduler = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if let due = phone.nextScheduledPoll, due <= Date() {
                        report(await phone.poll(trigger: .schedule), .schedule)
                    }
                }
            }
            defer { scheduler.cancel() }
            // After a tap, what the lock showed goes to the service (the door's decision, and the
            // revocation list the lock asked for): within a second, or at the next chance when offline.
            let doorReports = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard phone.isLoggedIn, phone.isOnline, let first = phone.pendingDoorReports.first else { continue }
                    let (sent, error) = await phone.uploadDoorReports()
                    if sent > 0 { say("door-reported", ["door": first.door, "decision": first.decision.rawValue, "reports": String(sent)]) }
                    if let error { say("door-report-failed", ["error": error]) }
                }
            }
            defer { doorReports.cancel() }

            let reading = Console.start(noConsole: noConsole, command: "phone run", alternatives: "it runs until SIGINT or SIGTERM")
            for await line in Console.lines(reading: reading) {
                let words = line.split(separator: " ").map(String.init)
                guard let verb = words.first else { continue }
                if await approvalConsole.handle(words) { continue }
                if await pushConsole.handle(words) { continue }
                switch verb {
                case "poll": report(await phone.poll(trigger: .manual), .manual)
                case "offline": phone.setOnline(false); say("offline", [:])
                case "online": phone.setOnline(true); say("online", [:])
                case "login":
                    guard words.count == 2 else { say("usage: login CODE", [:]); continue }
                    let c = words[1]
                    report(await phone.login(code: c), .login)
                    if phone.isLoggedIn { await registerPush() }
                case "logout":
                    if let error = await phone.logout() { say("logout-failed", ["error": error]) } else { say("logged-out", [:]) }
                case "show":
                    for k in phone.keys {
                        say("key", ["id": k.id, "iteration": String(k.iteration), "validUntil": RFC3339.format(k.validUntil),
                                    "expectedUpdate": RFC3339.format(k.expectedUpdate)])
                    }
                    say("state", ["keys": String(phone.keys.count), "revocation": phone.revocationSerial.map(String.init) ?? "-",
                                  "online": String(phone.isOnline), "loggedIn": String(phone.isLoggedIn),
                                  "nextPoll": phone.nextScheduledPoll.map(RFC3339.format) ?? "never", "lastError": phone.lastError ?? "-"])
                case "tap":
                    if let radioTap { say("tap", ["result": await onOwnThread("radio-tap", radioTap)]); continue }
                    if let field { _ = field(false); say("field", ["phone": field(true)]); continue }
                    say("tap: only with --transport ble, vpicc or pn532 (on socket the lock connects)", [:])
                case "insert", "remove":
                    guard let field else { say("\(verb): only with --transport pn532", [:]); continue }
                    say("field", ["phone": field(verb == "insert")])
                case "quit", "exit": return
                default: say("unknown command '\(verb)': poll, offline, online, show, login CODE, logout, tap, insert, remove, quit, \(PhoneApprovalConsole.verbs), \(PhonePushConsole.verbs)", [:])
                }
            }
        }
    }
}

/// One device authorization at a time.
private final class OneAtATime: Sendable {
    private let value = Mutex(false)
    /// True when it was free (and is now taken).
    func claim() -> Bool { value.withLock { was in defer { was = true }; return !was } }
    func release() { value.withLock { $0 = false } }
}

struct ScenarioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Run scenarios: trust service, phones and locks on one clock.",
        subcommands: [Run.self])

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run scenario files; exit 0 if all pass, 1 if one fails, 2 if one cannot be read, 3 if the environment fails.",
            discussion: """
            Each scenario gets its own site (SQLite), trust service on a loopback HTTP port, phones and \
            real LockService locks; taps cross the chosen transport. With --clock virtual (the default) \
            every actor reads one frozen clock that only `clock advance` and `run until` move, so nine \
            hours take milliseconds; --clock system runs on the wall clock (advances still shift every \
            actor together). The language is in docs/trust.md; the shipped scenarios are in scenarios/.
            """)
        @Argument(help: ArgumentHelp("Scenario files (.scenario).", valueName: "file"))
        var files: [String]
        @Option(help: ArgumentHelp("Write a JUnit XML report here.", valueName: "file"))
        var junit: String?
        @Flag(help: "Print the results as JSON.")
        var json = false
        @Flag(help: "Print each line as it runs.")
        var verbose = false
        @Option(help: ArgumentHelp("socket (default), pn532 (a virtual PN532 per lock, through libnfc), vpicc (a card in pcscd's Virtual PCD 00 00, through pcsc-lite) or ble (Bumble's virtual controllers).", valueName: "transport"))
        var transport: String = "socket"
        @Option(help: ArgumentHelp("virtual or system.", valueName: "mode"))
        var clock: String = "virtual"

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name at least one scenario file") }
            guard ["socket", "pn532", "vpicc", "ble"].contains(transport) else { throw ValidationError("--transport is socket, pn532, vpicc or ble") }
            guard clock == "virtual" || clock == "system" else { throw ValidationError("--clock is virtual or system") }
        }

        func run() async throws {
            var scripts = [ScenarioScript]()
            for f in files {
                let text = try KeyFiles.readText(f, what: "scenario")
                do { scripts.append(try ScenarioScript(parsing: text, name: f)) } catch {
                    throw UserError(message: "\(f): \(error.description)")
                }
            }
            let tap: TapTransport = transport == "socket" ? SocketTap() : RadioTap(RadioTap.Radio(rawValue: transport)!)
            var trace: (@Sendable (String) -> Void)?
            if verbose { trace = { emitError($0) } }
            let runner = ScenarioRunner(transport: tap, clockMode: clock == "system" ? .system : .virtual, trace: trace)
            var results = [ScenarioResult]()
            for s in scripts { results.append(await runner.run(s)) }
            if let junit {
                do { try Data(JUnitReport.xml(results).utf8).write(to: URL(fileURLWithPath: junit), options: .atomic) } catch {
                    throw UserError(message: "cannot write --junit \(junit): \(error.localizedDescription)", code: ExitCodes.environment)
                }
            }
            if json { print(KeyFiles.json(results)) } else {
                for r in results {
                    let time = String(format: "%.3f s", r.seconds)
                    switch r.status {
                    case .passed: print("PASS \(r.name) (\(r.steps) steps, \(time))")
                    case .failed, .error:
                        print("\(r.status == .failed ? "FAIL" : "ERROR") \(r.name):\(r.line ?? 0): \(r.command ?? "")")
                        print("  \(r.message ?? "")")
                    }
                }
                let passed = results.filter { $0.status == .passed }.count
                print("\(passed) passed, \(results.count - passed) failed")
            }
            if results.contains(where: { $0.status == .error }) { throw ExitCode(ExitCodes.environment) }
            if results.contains(where: { $0.status == .failed }) { throw ExitCode(ExitCodes.negative) }
        }
    }
}
