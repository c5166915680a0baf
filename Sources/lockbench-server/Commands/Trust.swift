import ArgumentParser
import ByteCore
import Codecs
import Foundation
import LockRuntime
import Logging
import Prometheus
import Push
import Metrics
import ServiceLifecycle
import TrustModel
import TrustCore
import TrustBackends
import TrustHTTP
import HTTPServing
import TrustPhone
import Scenario

/// `lockbench trust …`: the trust service that keeps short-lived keys current.
struct TrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Run the trust service that issues short-lived keys to phones and keeps them current; manage grants, devices and credentials.",
        discussion: """
        A site (`trust init DIR`) holds the issuer key whose public half every lock trusts \
        (DIR/issuer.pub.pem in the lock's trustedIssuers), the key that signs access tokens, the \
        settings (DIR/site.json: key lifetime, poll interval, token lifetimes) and an SQLite database \
        (or, with --db postgres://USER:PASSWORD@HOST:PORT/DB, a PostgreSQL database that several \
        `trust serve` instances share behind a load balancer). \
        `trust serve` answers phones over HTTP (docs/trust-openapi.json): the OAuth token endpoint and \
        the poll endpoint. The administrative commands work on the database directly, while the server \
        runs or not.

          lockbench trust init site
          lockbench trust device add --site site --device alice-phone --user \\
              alice --credential-key \
          alice.pub.pem
          lockbench trust grant add --site site --grant g1 --user alice \\
              --reader-identity \
          front.reader.json --whole-group
          lockbench trust serve --site site --port 8480
          lockbench trust grant revoke --site site --grant g1 --reason "left the \\
              company"
          lockbench trust credential suspend --site site --device alice-phone
        """,
        subcommands: [Init.self, Serve.self, DeviceCommand.self, GrantCommand.self, CredentialStateCommand.self, AdminKeyCommand.self, WebhookCommand.self, DoorCommand.self])

    /// `--db`, the store of every command that opens a site (`serve` and the admin commands).
    struct DatabaseOption: ParsableArguments {
        @Option(help: ArgumentHelp("The database: sqlite:PATH, or postgres://USER[:PASSWORD]@HOST[:PORT]/DB shared by several `trust serve` instances (default: sqlite:DIR/trust.sqlite).", valueName: "url"))
        var db: String?
    }

    /// What every admin command takes: the site, its database, the clock, `--json`.
    struct SiteOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The site directory (from `trust init`).", valueName: "dir"))
        var site: String
        @OptionGroup var database: DatabaseOption
        var db: String? { database.db }
        @Option(help: ArgumentHelp("Act as of this time instead of the system clock (RFC 3339).", valueName: "time"))
        var now: String?
        @Flag(help: "Print the result as JSON.")
        var json = false

        func withService<T: Sendable>(_ body: @Sendable (TrustService) async throws -> T) async throws -> T {
            let site = try TrustCommand.open(self.site)
            let clock = try TrustCommand.clock(now)
            return try await TrustCommand.mapErrors {
                let service = try await site.service(database: db, clock: clock)
                do {
                    let r = try await body(service)
                    try await service.storage.close()
                    return r
                } catch {
                    try? await service.storage.close()
                    throw error
                }
            }
        }

        /// `withService` for a command that shows one record: with --json, a record that does not
        /// exist is still answered in JSON on standard output (`{"found":false,"kind":"door","id":…,
        /// "message":…}`, exit 1), as `admin-key delete` answers, so a script reads one document either way.
        func showing<T: Sendable>(_ kind: String, _ id: String, _ body: @Sendable (TrustService) async throws -> T) async throws -> T {
            do { return try await withService(body) } catch let e as UserError where json && e.code == ExitCodes.negative {
                print(KeyFiles.json(MissingRecord(kind: kind, id: id, message: e.message)))
                throw e
            }
        }

        /// Deletes the `kind` record `id` through `body` (true: it existed): prints `deleted: ID`, or
        /// with --json `{"deleted":…,"id":…}`; one that does not exist exits 1.
        func delete(_ kind: String, _ id: String, _ body: @Sendable (TrustService) async throws -> Bool) async throws {
            let deleted = try await withService(body)
            if json { print(KeyFiles.json(Deleted(id: id, deleted: deleted))) } else if deleted { print("deleted: \(id)") }
            guard deleted else { throw UserError(message: "no \(kind) \(id.prefix(64))", code: ExitCodes.negative) }
        }

        /// A record as --json prints it: one line, keys sorted.
        static func printJSON<T: Encodable>(_ value: T) throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(value), as: UTF8.self))
        }
    }

    /// What `--json` prints for a record that does not exist (`SiteOptions.showing`).
    struct MissingRecord: Encodable {
        var found = false
        var kind: String
        var id: String
        var message: String
    }

    /// A database URL as printed: without its password.
    static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url), c.password != nil else { return url }
        c.password = "***"
        return c.string ?? url
    }

    /// `--now TIME`: a clock standing there; none: the system clock.
    static func clock(_ now: String?) throws -> any TrustClock {
        guard let now else { return SystemClock() }
        guard let d = RFC3339.parse(now) else { throw UserError(message: "--now \"\(now)\" is not an RFC 3339 time like 2026-03-02T09:00:00Z") }
        return FixedClock(d)
    }

    static func open(_ dir: String) throws -> TrustSite {
        do { return try TrustSite.open(dir) } catch { throw UserError(message: error.message) }
    }

    /// Service refusals become usage errors with the service's words; a damaged database an environment failure.
    static func mapErrors<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let e as TrustError {
            throw UserError(message: e.message, code: e.code == .notFound || e.code == .conflict || e.code == .final ? ExitCodes.negative : ExitCodes.usage)
        } catch let e as UserError { throw e } catch let e as HTTPServingError {
            throw UserError(message: e.description, code: e.environment ? ExitCodes.environment : ExitCodes.usage)
        } catch let e as TrustStorageError {
            throw UserError(message: "the database: \(e.description)", code: ExitCodes.environment)
        } catch {
            throw UserError(message: "\(error)", code: ExitCodes.environment)
        }
    }

    static func printChange(_ what: String, _ change: TrustChange, json: Bool) {
        if json {
            struct Out: Encodable { var done: String; var poll: [[String: String]]; var revocationSerial: UInt64? }
            print(KeyFiles.json(Out(done: what, poll: change.affected.map { ["device": $0.device, "trigger": $0.trigger.rawValue] },
                                    revocationSerial: change.revocationSerial)))
            return
        }
        print(what)
        if let s = change.revocationSerial { print("revocation list: serial \(s)") }
        for a in change.affected { print("poll: \(a.device) (\(a.trigger.rawValue))") }
    }

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a site: issuer key, token key, settings and database.",
            discussion: """
            Locks that should accept this site's keys list DIR/issuer.pub.pem in their trustedIssuers. \
            Settings can be given now (--set key-lifetime=8h, repeatable) or edited in DIR/site.json: \
            \(TrustSettings.names.joined(separator: ", ")).
            """)
        @Argument(help: ArgumentHelp("The new site's directory.", valueName: "dir"))
        var directory: String
        @Option(name: .customLong("set"), help: ArgumentHelp("A setting, NAME=VALUE (e.g. poll-interval=8h). Repeatable.", valueName: "name=value"))
        var settings: [String] = []
        @Option(help: ArgumentHelp("The database to create or migrate: sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DB (default: sqlite:DIR/trust.sqlite).", valueName: "url"))
        var db: String?

        func run() async throws {
            var s = TrustSettings()
            for pair in settings {
                let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2 else { throw UserError(message: "--set \(pair): write NAME=VALUE, e.g. --set poll-interval=8h") }
                do { try s.set(kv[0], kv[1]) } catch { throw UserError(message: "--set: \(error.message)") }
            }
            // A database named by --db is created or migrated first: if it is unreachable, no half site is left behind.
            if let db { try await TrustCommand.mapErrors { try await TrustSite.storage(db).close() } }
            let site: TrustSite
            do { site = try TrustSite.create(at: directory, settings: s) } catch { throw UserError(message: error.message) }
            if db == nil {
                try await TrustCommand.mapErrors { try await TrustSite.storage("sqlite:" + site.databasePath).close() }
            }
            print("site: \(directory)")
            print("issuer public key (list it in each lock's trustedIssuers): \(site.issuerPublicPath)")
            print("database: \(self.db.map(TrustCommand.redacted) ?? site.databasePath)")
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve phones over HTTP: the token endpoint and the poll endpoint.",
            discussion: """
            Runs until SIGINT or SIGTERM (graceful shutdown through swift-service-lifecycle). --clock \
            virtual starts a clock frozen at --now that only the process's own requests see (for demos \
            that must not depend on the wall clock); system is the default. Prometheus metrics are \
            served at /metrics.
            """)
        @Option(help: ArgumentHelp("The site directory.", valueName: "dir"))
        var site: String
        @OptionGroup var listen: ListenOptions<TrustServePort>
        @OptionGroup var database: DatabaseOption
        @Option(help: ArgumentHelp("system, or virtual (frozen at --now).", valueName: "mode"))
        var clock: String = "system"
        @Option(help: ArgumentHelp("With --clock virtual: the time (RFC 3339).", valueName: "time"))
        var now: String?
        @Option(name: .customLong("push-relay"), help: ArgumentHelp(
            "Push to phones through this relay (APNs-shaped POST /3/device/TOKEN: `lockbench push serve`'s URL) whenever their keys are created, changed or revoked — through this server, another instance on the same database, or the admin commands. Phones register their tokens at PUT /v1/push-token.",
            valueName: "url"))
        var pushRelay: String?
        @Option(name: .customLong("push-provider-key"), help: ArgumentHelp(
            "Sign every push to --push-relay with a provider token made with this P-256 private key (owner-only PEM; the relay, `push serve`, is given its public half).",
            valueName: "file"))
        var pushProviderKey: String?
        @Option(name: .customLong("metrics-token"), help: ArgumentHelp(
            "Answer GET /metrics only with Authorization: Bearer TOKEN. Without it, /metrics is served only when listening on loopback.",
            valueName: "token"))
        var metricsToken: String?
        @Option(name: .customLong("webhook-lease"), help: ArgumentHelp(
            "Seconds an instance keeps the right to deliver a webhook subscriber's events: instances on one database deliver one ordered stream, and one that stops is replaced within this time (1 to 3600; above 10, the longest a delivery may take, no event is sent twice by a handover).",
            valueName: "s"))
        var webhookLease: Double = 30
        @OptionGroup var tls: TLSOptions

        func validate() throws {
            if let metricsToken, metricsToken.utf8.count < 16 || !metricsToken.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
                throw ValidationError("--metrics-token must be 16 or more printable characters (no spaces)")
            }
            if let relay = pushRelay {
                guard let u = URL(string: relay), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
                    throw ValidationError("--push-relay '\(relay)' is not an http(s) URL; e.g. --push-relay http://127.0.0.1:8490")
                }
            }
            if pushProviderKey != nil && pushRelay == nil { throw ValidationError("--push-provider-key signs pushes to --push-relay: give both") }
            guard clock == "system" || clock == "virtual" else { throw ValidationError("--clock is system or virtual") }
            if clock == "virtual" && now == nil { throw ValidationError("--clock virtual needs --now TIME") }
            guard (1...3600).contains(webhookLease) else { throw ValidationError("--webhook-lease must be 1…3600 seconds") }
        }

        func run() async throws {
            let site = try TrustCommand.open(self.site)
            let clock = try TrustCommand.clock(now)
            let (db, host, port, pushRelay, metricsToken, tlsFiles) = (database.db, listen.host, listen.port, self.pushRelay, self.metricsToken, tls.files)
            let webhookLease = self.webhookLease
            let provider = try pushProviderKey.map { ProviderTokenSigner(key: try KeyFiles.privateKey($0, what: "--push-provider-key")) }
            tls.warnIfExposed(host: host, what: "the trust service")
            // Metrics say who polls how often: beyond loopback they need a token.
            let serveMetrics = metricsToken != nil || isLoopback(host)
            if !serveMetrics { emitError("warning: /metrics is not served on \(host) without --metrics-token") }
            try await TrustCommand.mapErrors {
                let registry = PrometheusCollectorRegistry()
                MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
                let service = try await site.service(database: db, clock: clock)
                // Push: every change announced on the store (any instance's or admin command's) goes
                // to the tokens registered with this instance (a phone registers through one instance).
                let notifier = pushRelay.map { TrustPushNotifier(relay: APNsHTTPSender(baseURL: $0, provider: provider), logger: serveLogger("lockbench.trust.push"),
                                                                 storage: service.storage) }
                // Phones registered before a restart are pushed to again at once, not only after their next login.
                if let notifier { try await notifier.restore() }
                // Webhook subscribers (`trust webhook add`): events from the stored cursor on.
                let dispatcher = WebhookDispatcher(service: service, lease: webhookLease, logger: serveLogger("lockbench.trust.webhooks"))
                let webhooks = dispatcher.start()
                let following = notifier.flatMap { n in (service.storage as? TrustChangeFeed).map { n.follow($0) } }
                let server: TrustServer
                do {
                    server = try await TrustServer.start(
                        service: service, host: host, port: port, registry: serveMetrics ? registry : nil, metricsToken: metricsToken,
                        pushTokens: notifier.map { n in { @Sendable device, token in try await n.registerDurably(device: device, token: token) } },
                        devicePush: notifier.map { n in { @Sendable data, devices in await n.push(data, to: devices) } },
                        tls: tlsFiles, logger: serveLogger("lockbench.trust"))
                } catch {
                    // The database is closed on this way out too (SQLiteNIO traps on a connection never closed).
                    following?.cancel()
                    try? await service.storage.close()
                    throw error
                }
                try await serveUntilSignal("trust service", host: host, port: server.port, secure: tlsFiles != nil) {
                    following?.cancel()
                    webhooks.cancel()
                    await webhooks.value
                    await dispatcher.release()
                    await server.stop()
                    try await service.storage.close()
                }
            }
        }
    }
}

/// `trust admin-key`: the admin API's credentials, distinct from phones' tokens.
struct AdminKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-key", abstract: "Create, list and delete admin API keys (scoped; stored hashed).",
        discussion: """
        The admin API (/v1/admin/…, docs/trust-openapi.json) does what these commands do — users, \
        devices, grants, credentials, revocations — through the same service calls, with \
        Authorization: Bearer KEY. A key holds scopes: devices:read, devices:write, grants:read, \
        grants:write, credentials:write, revocations:read, doors:read. The key is printed once; the site keeps \
        only its SHA-256.
        """,
        subcommands: [Create.self, List.self, Delete.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key; prints it once.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("A name for the key (who uses it).", valueName: "name"))
        var name: String
        @Option(parsing: .upToNextOption, help: ArgumentHelp("Scopes, space- or comma-separated.", valueName: "scope"))
        var scope: [String]
        func validate() throws {
            for s in scope.flatMap({ $0.split(separator: ",") }) where AdminScope(rawValue: String(s)) == nil {
                throw ValidationError("--scope \(s.prefix(40)) is not one of \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        func run() async throws {
            let scopes = scope.flatMap { $0.split(separator: ",") }.compactMap { AdminScope(rawValue: String($0)) }
            let name = self.name
            let key = try await site.withService { try await $0.createAdminKey(name: name, scopes: scopes) }
            print(site.json ? KeyFiles.json(["name": name, "key": key]) : "admin key: \(key)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys: id, name, scopes (never the secret).")
        @OptionGroup var site: TrustCommand.SiteOptions
        func run() async throws {
            let keys = try await site.withService { try await $0.adminKeys() }
            if site.json { print(KeyFiles.json(keys.map { ["id": $0.id, "name": $0.name, "scopes": $0.scopes.map(\.rawValue).joined(separator: ",")] })); return }
            for k in keys { print("\(k.id)\t\(k.name)\t\(k.scopes.map(\.rawValue).joined(separator: ","))") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a key by id; it is refused from then on.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The key's id (the part after lbk.).", valueName: "id"))
        var id: String
        func run() async throws {
            let id = self.id
            try await site.delete("admin key", id) { try await $0.deleteAdminKey(id: id) }
        }
    }
}

/// `trust webhook`: subscribers that receive every administrative change as signed events.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Add, list and delete webhook subscribers (signed events, in order, retried).",
        discussion: """
        `trust serve` POSTs each administrative change (grant-issued, grant-modified, grant-revoked, \
        lock-grants-revoked, credential-changed; one event per affected device) to every subscriber as \
        JSON, one at a time and in order, with LockBench-Event-Id and LockBench-Signature: t=UNIX,v1=HEX \
        (HMAC-SHA256 with the subscriber's secret over "t.BODY"). A refusal or no answer is retried \
        with exponential back-off; events are stored with the change, so a restart loses none.
        """,
        subcommands: [Add.self, List.self, Delete.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a subscriber; prints its id and signing secret.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("Where events are POSTed (http or https).", valueName: "url"))
        var url: String
        func run() async throws {
            let url = self.url
            let hook = try await site.withService { try await $0.addWebhook(url: url) }
            print(site.json ? KeyFiles.json(["id": hook.id, "url": hook.url, "secret": hook.secret]) : "webhook \(hook.id) secret \(hook.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List subscribers: id and URL.")
        @OptionGroup var site: TrustCommand.SiteOptions
        func run() async throws {
            let hooks = try await site.withService { try await $0.webhooks() }
            if site.json { print(KeyFiles.json(hooks.map { ["id": $0.id, "url": $0.url] })); return }
            for h in hooks { print("\(h.id)\t\(h.url)") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a subscriber by id.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The subscriber's id (wh_…).", valueName: "id"))
        var id: String
        func run() async throws {
            let id = self.id
            try await site.delete("webhook", id) { try await $0.deleteWebhook(id: id) }
        }
    }
}

/// What `admin-key delete` and `webhook delete` answer with --json.
struct Deleted: Encodable { var id: String; var deleted: Bool }

/// A clock standing at one time (admin commands with --now, `serve --clock virtual`).
struct FixedClock: TrustClock {
    let time: Date
    init(_ time: Date) { self.time = time }
    func now() -> Date { time }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Register devices (phones) and their credential keys; issue login codes.",
        subcommands: [Add.self, Enroll.self, ApproveCode.self, List.self, History.self])

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Why did this phone lose its key: the device's history, oldest first.",
            discussion: """
            Every key issued, refreshed or deleted, the administrative change behind it (grant-issued, \
            grant-modified, grant-revoked, lock-grants-revoked, credential-changed), every push sent or \
            refused by the relay, every poll and refresh refused, with the reason. The newest \(DeviceEvent.retained) \
            are kept per device. Also GET /v1/admin/devices/{id}/events (scope devices:read).
            """)
        @OptionGroup var site: TrustCommand.SiteOptions
        @Argument(help: ArgumentHelp("The device id.", valueName: "id"))
        var device: String
        func run() async throws {
            let device = self.device
            let events = try await site.showing("device", device) { try await $0.deviceHistory(device: device) }
            if site.json { return try TrustCommand.SiteOptions.printJSON(events) }
            for e in events {
                var line = "\(e.at)  \(e.kind.rawValue)"
                if let k = e.key { line += "  key=\(k)" }
                if let i = e.iteration { line += " iteration=\(i)" }
                if let r = e.reason { line += "  reason=\(r)" }
                if let d = e.detail { line += "  (\(d))" }
                print(line)
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a device with its credential key; prints its one-time login code.",
            discussion: "The phone exchanges the code at POST /v1/token (grant_type=authorization_code) for its first tokens: `lockbench phone run --code CODE`.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The device id (letters, digits, - _ . @).", valueName: "id"))
        var device: String
        @Option(help: ArgumentHelp("The user the device belongs to.", valueName: "user"))
        var user: String
        @Option(name: .customLong("credential-key"), help: ArgumentHelp("The phone's credential key (PEM, public or private).", valueName: "file"))
        var credentialKey: String

        func run() async throws {
            let key = try KeyFiles.publicKey(credentialKey, what: "credential key")
            let (device, user) = (self.device, self.user)
            let code = try await site.withService { try await $0.addDevice(id: device, user: user, credentialKey: key) }
            if site.json { print(KeyFiles.json(["device": device, "user": user, "code": code])) } else {
                print("device \(device) of \(user) registered")
                print("login code: \(code)")
            }
        }
    }

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A new one-time login code for a device (re-authorization after its login expired).")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The device id.", valueName: "id"))
        var device: String
        func run() async throws {
            let device = self.device
            let code = try await site.withService { try await $0.enroll(device: device) }
            print(site.json ? KeyFiles.json(["device": device, "code": code]) : "login code: \(code)")
        }
    }

    struct ApproveCode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve-code",
            abstract: "Approve (or --deny) the user code a phone shows to log in again (RFC 8628).",
            discussion: """
            A registered phone whose login ended (`phone run` prints "authorize … user_code=BCDF-GHJK") asks \
            the service for a code pair at POST /v1/device_authorization and polls until the user \
            approves. Approve here, or from another enrolled phone of the same user (POST \
            /v1/device_authorization/approve with its bearer token). Codes live 10 minutes.
            """)
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The user code the phone shows, e.g. BCDF-GHJK.", valueName: "code"))
        var code: String
        @Flag(help: "Refuse instead: the phone's poll answers access_denied.")
        var deny = false
        func run() async throws {
            let (code, deny) = (self.code, self.deny)
            let device = try await site.withService { try await $0.answerDeviceAuthorization(userCode: code, approve: !deny) }
            print(site.json ? KeyFiles.json(["device": device, "answer": deny ? "denied" : "approved"]) : "\(deny ? "denied" : "approved"): \(device)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices and their credential states.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("Only this user's devices.", valueName: "user"))
        var user: String?
        func run() async throws {
            let user = self.user
            let devices = try await site.withService { try await $0.devices(user: user) }
            if site.json {
                print(KeyFiles.json(devices.map { ["device": $0.id, "user": $0.user, "credential": $0.credentialState.rawValue,
                                                   "keyHash": Hex.encode(Primitives.sha256($0.credentialKey))] }))
            } else {
                for d in devices { print("\(d.id)\t\(d.user)\t\(d.credentialState.rawValue)") }
            }
        }
    }
}

struct GrantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant", abstract: "Grant a user access to readers, modify or revoke grants.",
        discussion: """
        Each change tells which phones should poll now (Tapkey manual polling: after a grant is issued, \
        after a grant affecting the user is modified or revoked, after grants on locks the user can open \
        are revoked). Revoking (and narrowing) also publishes the next revocation list, which any phone \
        carries to offline locks.
        """,
        subcommands: [Add.self, Modify.self, Revoke.self, List.self])

    struct Readers: ParsableArguments {
        @Option(help: ArgumentHelp("A reader group or one reader: GROUP or GROUP:SUB (hex). Repeatable.", valueName: "group[:sub]"))
        var reader: [String] = []
        @Option(name: .customLong("reader-identity"), help: ArgumentHelp("A reader identity file (from `key reader`). Repeatable.", valueName: "file"))
        var readerIdentity: [String] = []
        @Flag(name: .customLong("whole-group"), help: "With --reader-identity: every reader of its group.")
        var wholeGroup = false
        @Option(help: ArgumentHelp("A weekly window, e.g. \"mon-fri 08:00-18:00\". Repeatable.", valueName: "days hh:mm-hh:mm"))
        var schedule: [String] = []

        func rules() throws -> [String] {
            var out = reader
            for path in readerIdentity {
                let (f, _) = try ReaderIdentityFile.load(path)
                out.append(wholeGroup ? f.groupID : f.groupID + ":" + f.subID)
            }
            return out
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Grant a user access to readers (optionally on schedules).")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The grant id.", valueName: "id")) var grant: String
        @Option(help: ArgumentHelp("The user.", valueName: "user")) var user: String
        @OptionGroup var readers: Readers
        func run() async throws {
            let rules = try readers.rules(), (grant, user, schedules) = (self.grant, self.user, readers.schedule)
            guard !rules.isEmpty else { throw UserError(message: "name at least one --reader GROUP[:SUB] or --reader-identity FILE") }
            let change = try await site.withService { try await $0.addGrant(id: grant, user: user, readers: rules, schedules: schedules) }
            TrustCommand.printChange("grant \(grant) issued to \(user)", change, json: site.json)
        }
    }

    struct Modify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a grant's readers or schedules (its keys are re-issued, the old ones revoked).")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The grant id.", valueName: "id")) var grant: String
        @OptionGroup var readers: Readers
        @Flag(name: .customLong("no-schedule"), help: "Remove every schedule (any time).") var noSchedule = false
        func run() async throws {
            let rules = try readers.rules(), grant = self.grant
            let schedules: [String]? = noSchedule ? [] : (readers.schedule.isEmpty ? nil : readers.schedule)
            guard !rules.isEmpty || schedules != nil else { throw UserError(message: "give new --reader/--reader-identity, --schedule or --no-schedule") }
            let change = try await site.withService { try await $0.modifyGrant(id: grant, readers: rules.isEmpty ? nil : rules, schedules: schedules) }
            TrustCommand.printChange("grant \(grant) modified", change, json: site.json)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a grant, with a reason (kept for the audit).")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The grant id.", valueName: "id")) var grant: String
        @Option(help: ArgumentHelp("Why (e.g. \"left the company\").", valueName: "text")) var reason: String
        func run() async throws {
            let (grant, reason) = (self.grant, self.reason)
            let change = try await site.withService { try await $0.revokeGrant(id: grant, reason: reason) }
            TrustCommand.printChange("grant \(grant) revoked", change, json: site.json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List grants.")
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("Only this user's grants.", valueName: "user")) var user: String?
        func run() async throws {
            let user = self.user
            let grants = try await site.withService { try await $0.grants(user: user) }
            if site.json { print(KeyFiles.json(grants.map(GrantJSON.init))) } else {
                for g in grants {
                    print("\(g.id)\t\(g.user)\t\(g.state.rawValue)\t\(g.readers.joined(separator: ","))\t\(g.schedules.joined(separator: "; "))"
                          + (g.reason.map { "\treason: \($0)" } ?? ""))
                }
            }
        }
    }

    struct GrantJSON: Encodable {
        var id, user, state: String
        var readers, schedules: [String]
        var reason: String?
        var revision: Int
        init(_ g: GrantRecord) {
            id = g.id; user = g.user; state = g.state.rawValue; readers = g.readers; schedules = g.schedules; reason = g.reason; revision = g.revision
        }
    }
}

/// `trust credential suspend|resume|deactivate|delete` (Schlage guide credential states).
struct CredentialStateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Suspend, resume, deactivate (final) or delete a device's credential.",
        discussion: """
        Suspending or deactivating revokes the credential by its key hash in the next revocation list: \
        each lock denies it (`revoked`) once any phone has carried that list there, even while the phone \
        itself stays offline with its keys. Resume lifts a suspension. Deactivation is final: resume is \
        refused (exit 1); delete removes it for good.
        """,
        subcommands: [Suspend.self, Resume.self, Deactivate.self, Delete.self])

    struct Options: ParsableArguments {
        @OptionGroup var site: TrustCommand.SiteOptions
        @Option(help: ArgumentHelp("The device id.", valueName: "id")) var device: String
        @Option(help: ArgumentHelp("Why (kept with the change).", valueName: "text")) var reason: String?

        func apply(_ target: CredentialState) async throws {
            let (device, reason) = (self.device, self.reason)
            let change = try await site.withService { try await $0.setCredential(device: device, to: target, reason: reason) }
            TrustCommand.printChange("credential of \(device): \(target.rawValue)", change, json: site.json)
        }
    }

    struct Suspend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Suspend a credential (revoked at locks until resumed).")
        @OptionGroup var options: Options
        func run() async throws { try await options.apply(.suspended) }
    }
    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resume a suspended credential (refused after deactivation).")
        @OptionGroup var options: Options
        func run() async throws { try await options.apply(.active) }
    }
    struct Deactivate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deactivate a credential: final, its logins end, it is revoked at every lock.")
        @OptionGroup var options: Options
        func run() async throws { try await options.apply(.deactivated) }
    }
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a credential from its device (its keys are deleted at the next poll).")
        @OptionGroup var options: Options
        func run() async throws { try await options.apply(.deleted) }
    }
}
