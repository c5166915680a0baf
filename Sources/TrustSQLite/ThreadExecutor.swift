import Dispatch

/// A task executor on a serial dispatch queue of its own. The write path is a chain of round trips
/// to SQLite's thread; resumed on the shared cooperative pool, each would wait behind every request
/// the HTTP server is handling, and the one serialized writer would run at the pace of that queue.
/// On its own queue (its own thread while it has work) the writer resumes at once.
final class ThreadExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(name: String) {
        queue = DispatchQueue(label: name, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
