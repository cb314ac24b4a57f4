import NIOCore
import NIOPosix

/// The event loop of the process's PostgreSQL ledgers: their connections live on it, and the tasks
/// that drive them (each writer's groups, every leased connection's work, the lookups' statements
/// included) run on it, on one thread apart from the event loops that serve HTTP.
///
/// On the server's own event loops, a statement's answer waited behind the requests queued on the
/// loop that held the connection: a task resumes on the loop that resumed it, so the requests a
/// writer answers after its commit ran on the writer's loop, ahead of the writer's next statement.
/// Each of the dozen round trips of a group waited out that queue (about 0.7 ms each, for tens of
/// microseconds of PostgreSQL's time). Here a statement is sent and its answer read as soon as the
/// thread runs, and the requests a write answers resume on the server's loops, spread over them.
final class PostgresEventLoop: TaskExecutor, Sendable {
    /// The loop every PostgreSQL ledger of the process shares: made when the first one starts, kept
    /// until the process ends (as SwiftNIO's own shared groups are).
    static let shared = PostgresEventLoop()

    /// The one-thread group PostgresNIO opens its connections on.
    let group: MultiThreadedEventLoopGroup
    /// The group's loop, which also runs the ledger's timers.
    let loop: any EventLoop

    private init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// Runs a task's job on the loop (a task that prefers this executor runs all its work here).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
