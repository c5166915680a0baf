import AccessProtocol
import ByteCore
import Foundation
import Lock
import OfflineUnlock
import SocketTransport

extension LockService {
    /// `lock transact`: one transaction against a credential listening on TCP, decided as
    /// `lock run` decides (engine, clock, state, FAST cache, audit log), and what the reader learnt
    /// written before returning (one transaction per process). A credential that cannot be reached
    /// is a `UserError` with exit 3.
    public func transact(connectingTo host: String, port: UInt16, framing: SocketFraming,
                         timeoutMilliseconds: Int32) throws -> TransactionOutcome {
        let link: SocketTransceiver
        do {
            link = try SocketTransceiver(host: host, port: port, framing: framing, timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            throw UserError(message: "cannot reach the credential at \(host):\(port): \(error.reason)", code: ExitCodes.environment)
        }
        defer { link.close() }
        let outcome = transact(over: link, interface: .socket)
        flush()
        return outcome
    }
}

extension EmulatedLock {
    /// `decide`: the presentation a reader session would hand the lock after AUTH1 (the
    /// credential's key, a transaction id, the step-up documents), decided, acted on and recorded
    /// through the same `apply` as a transaction on a radio.
    public func decide(credentialKey key: [UInt8], transactionID: [UInt8], interface: RadioInterface, protocolVersion: UInt16,
                       accessDocuments: [[UInt8]], revocationDocuments: [[UInt8]]) -> OutcomeReport {
        let stepUp = wantsStepUp(credentialPublicKey: key)
        let presentation = Presentation(credentialPublicKey: key, transactionID: transactionID, interface: interface,
                                        protocolVersion: protocolVersion, fast: false,
                                        accessDocuments: accessDocuments, revocationDocuments: revocationDocuments)
        let outcome = apply(.presentation(presentation))
        var report = OutcomeReport(outcome, presentation: presentation, bolt: boltName, at: clock.now())
        report.stepUpWanted = stepUp
        return report
    }
}
