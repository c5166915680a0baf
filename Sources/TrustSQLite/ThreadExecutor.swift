import Foundation
import TrustModel

/// A task executor with one thread of its own. The write path is a chain of round trips to
/// SQLite's thread; resumed on the shared cooperative pool, each would wait behind every request
/// the HTTP server is handling, and the one serialized writer would run at the pace of that queue.
/// On its own thread the writer resumes at once.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init(name: String) {
        let thread = Thread { [self] in self.loop() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once the jobs queued so far ran.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            let done = stopped && batch.isEmpty
            condition.unlock()
            if done { return }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
