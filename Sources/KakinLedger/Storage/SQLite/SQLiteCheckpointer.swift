import Logging
import Synchronization

/// Copies the write-ahead log back into the database file on a connection and a thread of its
/// own, so the group-commit writer does not stop taking jobs while pages are copied and the
/// database file is synced.
///
/// The writer asks for a checkpoint when the log has grown (``request()``); requests that come
/// while one runs are folded into one more run. A checkpoint here is `PASSIVE`: it copies what no
/// reader still needs and never waits for readers or the writer. It cannot reset the log while
/// the writer keeps appending, so the writer finishes the small remainder itself now and then
/// (see ``SQLiteLedgerEngine``), after which SQLite starts the log over from its beginning.
final class SQLiteCheckpointer: Sendable {
    private struct State {
        var running = false
        var again = false
        var closed = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var handle: SQLiteHandle?
    }

    private let path: String
    private let pragmas: [String]
    private let logger: Logger
    private let executor = SQLiteThreadExecutor(name: "ledger.checkpt")
    private let state = Mutex(State())

    init(path: String, pragmas: [String], logger: Logger) {
        self.path = path
        self.pragmas = pragmas
        self.logger = logger
    }

    /// Whether a checkpoint is running now.
    var isRunning: Bool { state.withLock { $0.running } }

    /// Starts a checkpoint, or asks the running one for another pass when it ends.
    func request() {
        let start = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard !state.running else {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        Task(executorPreference: executor) { self.run() }
    }

    /// Waits for a running checkpoint to end, then stops the thread.
    func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                state.closed = true
                guard state.running else { return true }
                state.idleWaiters.append(done)
                return false
            }
            if idle { done.resume() }
        }
        state.withLock { $0.handle = nil }
        executor.stop()
    }

    private func run() {
        while true {
            do {
                try connection().execute("PRAGMA wal_checkpoint(PASSIVE)")
            } catch {
                logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
            }
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                if state.again && !state.closed {
                    state.again = false
                    return nil
                }
                state.running = false
                state.again = false
                defer { state.idleWaiters = [] }
                return state.idleWaiters
            }
            guard let waiters else { continue }
            for waiter in waiters { waiter.resume() }
            return
        }
    }

    private func connection() throws -> SQLiteHandle {
        if let handle = state.withLock({ $0.handle }) { return handle }
        let handle = try SQLiteHandle(path: path)
        for pragma in pragmas { try handle.execute(pragma) }
        state.withLock { $0.handle = handle }
        return handle
    }
}
