import Foundation

/// A task executor with one thread of its own: tasks that prefer it run their code there, so the
/// SQLite writer's work never occupies the threads that serve requests.
final class SQLiteThreadExecutor: TaskExecutor, Sendable {
    private let thread: BatchThread<UnownedJob>

    /// - Parameter name: the thread's name, as `top -H` and `perf` show it (Linux keeps 15 bytes).
    init(name: String) {
        thread = BatchThread(name: name)
        thread.start { [self] jobs in
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        thread.submit(UnownedJob(job))
    }

    /// Lets the thread end once its queue is empty.
    func stop() {
        thread.stop()
    }
}
