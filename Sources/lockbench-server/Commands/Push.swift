import ArgumentParser
import Crypto
import Foundation
import Logging
import LockRuntime
import OfflineUnlock
import HTTPServing
import Push


/// `lockbench push serve`: the push relay (APNs- and FCM-shaped) and the mobile wake-up service.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "A push relay shaped like APNs and FCM, with mobile wake-up subscriptions and fault injection.",
        discussion: """
        A backend that speaks APNs (POST /3/device/TOKEN) or FCM v1 (POST /v1/projects/P/messages:send) \
        can be pointed at the relay. It applies the rules both services publish: payloads over 4096 bytes \
        are refused (APNs 413 PayloadTooLarge, FCM 400 INVALID_ARGUMENT), FCM data values must be strings, \
        a time to live of 0 means the message is never stored for an unreachable device, collapse ids are \
        at most 64 bytes, and a retired token answers APNs 410 Unregistered or FCM 404 UNREGISTERED.

        Phones register a token with POST /lockbench/devices/TOKEN and collect their pushes with GET \
        /lockbench/devices/TOKEN/inbox?wait=SECONDS, each with Authorization: Bearer SECRET, a secret of \
        the phone's own set at the first POST: only it reads, retires or subscribes for that token. Faults make the relay behave like a bad day: \
        --drop loses a percentage of messages, --delay holds every message back, --throttle limits \
        background pushes per hour to an app in the background.

        Mobile wake-up follows the tutorial: PUT or DELETE /base/APP/.wakeup/PATH?id=DEVICE[&token=T][&mode=noData|value|childEvent] \
        answers 204, or 404 namespace_does_not_exist, or 403 disabled, permission_denied or too_big. \
        Writing data with PUT /base/APP/PATH (a JSON body) wakes every device subscribed to that path or \
        above it; GET /base/APP/PATH is the explicit read a phone makes after a message without its data.

        Senders are authenticated as APNs does with --provider-key PUB.pem: every push and every data \
        write then needs Authorization: bearer TOKEN, an ES256 token ({"alg":"ES256","kid":K}.{"iss":…,"iat":…}) \
        signed with the private half and at most an hour old, verified on every request (403 \
        MissingProviderToken, InvalidProviderToken or ExpiredProviderToken; FCM 401 UNAUTHENTICATED). \
        A trust service given the private half signs them. The inboxes' waiting data is bounded, \
        256 KiB per phone and 64 MiB in all: a push past either is refused (APNs 429 TooManyRequests, \
        FCM 429 QUOTA_EXCEEDED) until the phone collects.
        """,
        subcommands: [Serve.self])

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the relay and the wake-up service until SIGINT or SIGTERM.",
            discussion: """
            Prints "push relay listening on http://HOST:PORT" once it accepts connections. Each --app \
            creates a wake-up application (namespace) with wake-up enabled and every path readable \
            without a token.
            """)
        @OptionGroup var listen: ListenOptions<PushServePort>
        @Option(help: ArgumentHelp("A wake-up application to create. Repeatable.", valueName: "name"))
        var app: [String] = []
        @Option(help: ArgumentHelp("Percent of accepted messages to lose (0-100).", valueName: "percent"))
        var drop: Int = 0
        @Option(help: ArgumentHelp("Seconds every message is held back.", valueName: "seconds"))
        var delay: Double = 0
        @Option(help: ArgumentHelp("Background pushes per hour an app in the background receives.", valueName: "n"))
        var throttle: Int?
        @Option(help: ArgumentHelp("How long a wake-up subscription lives unless repeated, like 30d or 1h.", valueName: "duration"))
        var lifetime: String = "30d"
        @Option(name: .customLong("provider-key"), help: ArgumentHelp(
            "Accept pushes and data writes only with a provider token signed by this key's private half (a P-256 public key PEM, e.g. NAME.pub.pem from `lockbench key issuer NAME`).",
            valueName: "file"))
        var providerKey: String?
        @OptionGroup var tls: TLSOptions

        func validate() throws {
            guard (0...100).contains(drop) else { throw ValidationError("--drop is a percentage, 0…100") }
            guard delay >= 0, delay <= 86400, delay.isFinite else { throw ValidationError("--delay is 0…86400 seconds") }
            if let throttle, throttle < 0 { throw ValidationError("--throttle is a count of pushes per hour, 0 or more") }
            guard let l = DurationText.parse(lifetime), l > 0 else { throw ValidationError("--lifetime is a duration like 30d, 12h or 90s") }
            _ = l
            for a in app {
                do { try WakeUpService.checkApp(a) } catch { throw ValidationError("--app \(a.prefix(40)): \(error.message)") }
            }
        }

        func run() async throws {
            let (host, port, apps) = (listen.host, listen.port, self.app)
            var faults = PushFaults()
            faults.dropPercent = drop; faults.delay = delay; faults.backgroundPerHour = throttle
            let lifetime = DurationText.parse(self.lifetime) ?? 30 * 86400
            let provider = try providerKey.map { path in
                try P256.Signing.PublicKey(x963Representation: KeyFiles.publicKey(path, what: "--provider-key"))
            }
            if provider == nil && !isLoopback(host) {
                emitError("warning: without --provider-key anyone who reaches \(host) can push to the phones and write wake-up data")
            }
            do {
                do {
                    let relay = PushRelay(seed: UInt64.random(in: 0...UInt64.max))
                    relay.faults = faults
                    let wakeUp = WakeUpService(relay: relay, lifetime: lifetime)
                    for a in apps { try wakeUp.createApplication(a) }
                    tls.warnIfExposed(host: host, what: "the push relay")
                    let server = try await PushServer.start(relay: relay, wakeUp: wakeUp, host: host, port: port, tls: tls.files,
                                                            providerKey: provider, logger: serveLogger("lockbench.push"))
                    try await serveUntilSignal("push relay", host: host, port: server.port, secure: tls.files != nil) { await server.stop() }
                }
            } catch let e as PushRefusal {
                throw UserError(message: "\(e.description); pick another --port, or 0 for any free one", code: ExitCodes.environment)
            } catch let e as WakeUpError {
                throw UserError(message: e.description, code: ExitCodes.usage)
            } catch let e as HTTPServingError {
                throw UserError(message: e.description, code: e.environment ? ExitCodes.environment : ExitCodes.usage)
            }
        }
    }
}
