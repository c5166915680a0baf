import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import Synchronization
import TrustCore

/// Delivers webhook events (`TrustService+Webhooks`) to each subscriber in order: one event at a
/// time, the next only after a 2xx; a refusal or no answer is retried with exponential back-off
/// (`backoff`, doubling, at most `maxBackoff`). Each POST carries the event as JSON and
/// `LockBench-Signature: t=UNIX,v1=HEX`, HMAC-SHA256 with the subscriber's secret over `t.BODY`
/// (the subscriber checks it and the time), and `LockBench-Event-Id` for de-duplication (delivery
/// is at least once: an answer lost before the cursor moved is sent again, also after a restart).
public final class WebhookDispatcher: Sendable {
    let service: TrustService
    let http: HTTPClient
    let backoff: TimeInterval
    let maxBackoff: TimeInterval
    let logger: Logger?
    /// This dispatcher's name in the delivery lease (`TrustService.leaseWebhook`), and how long a
    /// lease lasts: longer than a POST may take (10 s), renewed when half of it is left. An
    /// instance that stops hands its subscribers to another within `lease` seconds.
    public let instance: String
    public let lease: TimeInterval
    private struct Retry { var attempts: Int; var due: Date }
    private let retries = Mutex<[String: Retry]>([:])
    private let leased = Mutex<[String: Date]>([:])

    public init(service: TrustService, http: HTTPClient = .shared, backoff: TimeInterval = 1, maxBackoff: TimeInterval = 300,
                lease: TimeInterval = 30, instance: String = UUID().uuidString, logger: Logger? = nil) {
        self.service = service; self.http = http; self.backoff = backoff; self.maxBackoff = maxBackoff; self.logger = logger
        self.lease = lease; self.instance = instance
    }

    /// Whether this instance delivers `hook`'s events now: it holds the lease with more than half
    /// of it left, or takes or renews it (one write per half lease, and only when there is an event).
    func holdsLease(_ hook: TrustService.Webhook) async -> Bool {
        if let until = leased.withLock({ $0[hook.id] }), Date().addingTimeInterval(lease / 2) < until { return true }
        let start = Date()
        guard (try? await service.leaseWebhook(hook, holder: instance, ttl: lease)) == true else {
            leased.withLock { $0[hook.id] = nil }
            return false
        }
        leased.withLock { $0[hook.id] = start.addingTimeInterval(lease) }
        return true
    }

    /// The signature header's value for `body` at `time`.
    public static func signature(secret: String, time: Int64, body: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(time).".utf8) + body, using: SymmetricKey(data: Array(secret.utf8)))
        return "t=\(time),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Runs until cancelled, every `every` seconds.
    public func start(every: TimeInterval = 0.2) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                await deliverDue()
                try? await Task.sleep(nanoseconds: UInt64(every * 1_000_000_000))
            }
        }
    }

    /// Gives up the leases this instance holds (a graceful stop: cancel `start`'s task and wait
    /// for it first), so another instance delivers at once rather than after the lease.
    public func release() async {
        let held = leased.withLock { l in defer { l = [:] }; return Array(l.keys) }
        for id in held {
            do { try await service.releaseWebhookLease(hookID: id, holder: instance) } catch {
                logger?.warning("webhook \(id): could not give up the delivery lease (another instance takes over when it runs out): \(error)")
            }
        }
    }

    /// One pass: each subscriber not waiting out a back-off gets its next event.
    public func deliverDue() async {
        guard let hooks = try? await service.webhooks() else { return }
        service.noteWebhookSubscribers(!hooks.isEmpty)
        for hook in hooks {
            if let r = retries.withLock({ $0[hook.id] }), Date() < r.due { continue }
            guard let event = try? await service.nextWebhookEvent(for: hook), await holdsLease(hook) else { continue }
            if await post(event, to: hook) {
                retries.withLock { $0[hook.id] = nil }
                do { try await service.acknowledgeWebhookEvent(event, for: hook, holder: instance) } catch {
                    logger?.warning("webhook \(hook.id): delivered \(event.id) but could not store the cursor: \(error)")
                }
            } else {
                retries.withLock { r in
                    let attempts = (r[hook.id]?.attempts ?? 0) + 1
                    let wait = min(maxBackoff, backoff * pow(2, Double(attempts - 1)))
                    r[hook.id] = Retry(attempts: attempts, due: Date().addingTimeInterval(wait))
                }
            }
        }
    }

    func post(_ event: TrustService.WebhookEvent, to hook: TrustService.Webhook) async -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let body = try? encoder.encode(event) else { return false }
        var request = HTTPClientRequest(url: hook.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "LockBench-Event-Id", value: event.id)
        request.headers.add(name: "LockBench-Signature", value: Self.signature(secret: hook.secret, time: Int64(Date().timeIntervalSince1970), body: Array(body)))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(request, timeout: .seconds(10))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(Int(response.status.code))
        } catch {
            logger?.info("webhook \(hook.id): \(event.id) not delivered: \(error)")
            return false
        }
    }
}
