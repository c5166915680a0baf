import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs `handler` once on SIGINT or SIGTERM (the default actions are replaced).
public final class StopSignals {
    private var sources: [DispatchSourceSignal] = []

    public init(queue: DispatchQueue = DispatchQueue(label: "lockbench.signals"), _ handler: @escaping (Int32) -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { handler(sig) }
            source.resume()
            sources.append(source)
        }
    }
}
