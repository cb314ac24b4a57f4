import Foundation
import Synchronization

/// A task executor with one thread of its own: tasks that prefer it run their code there, so the
/// SQLite writer's work never occupies the threads that serve requests.
final class SQLiteThreadExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let wakeUp = NSCondition()

    /// - Parameter name: the thread's name, as `top -H` and `perf` show it (Linux keeps 15 bytes).
    init(name: String) {
        let thread = Thread { [self] in
            #if os(Linux)
            // Foundation names the thread for itself only; the system would show its creator's name.
            try? String(decoding: name.utf8.prefix(15), as: UTF8.self).write(
                toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            #endif
            run()
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        state.withLock { $0.jobs.append(unowned) }
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
    }

    /// Lets the thread end once its queue is empty.
    func stop() {
        state.withLock { $0.stopped = true }
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
    }

    private func run() {
        while true {
            let (jobs, stopped) = state.withLock { state -> ([UnownedJob], Bool) in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.stopped)
            }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if !jobs.isEmpty { continue }
            if stopped { return }
            wakeUp.lock()
            if state.withLock({ $0.jobs.isEmpty && !$0.stopped }) { wakeUp.wait() }
            wakeUp.unlock()
        }
    }
}
