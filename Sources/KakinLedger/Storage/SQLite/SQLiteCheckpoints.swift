import GRDB
import Synchronization

/// Checkpoints of a SQLite ledger's write-ahead log, run on a connection of their own so that the
/// writes do not wait for them.
///
/// A checkpoint copies the pages the log holds back into the database file. SQLite runs one by
/// itself in the connection that commits once the log passes 1000 pages, and that connection
/// waits for it: in a large ledger every write changes index pages far apart, so those pages are
/// scattered over the file and each checkpoint stalls every write queued behind it. Here, after
/// every ``commitsPerCheckpoint`` commits, a passive checkpoint (SQLite's `PRAGMA
/// wal_checkpoint(PASSIVE)`) runs on a second connection while the writer goes on: it copies the
/// pages committed so far without taking the write lock or waiting for readers. The writer's own
/// automatic checkpoint stays on: it finds most pages copied already, copies the few committed
/// since, and lets the log start over. Commits that come while a checkpoint runs are covered by
/// the next one.
///
/// Not after every commit: the first commit after a checkpoint walks the writer's whole page
/// cache (SQLite drops from it what lies past the database's end), which with the writer's large
/// cache cost a new purchase about a twentieth of its CPU when every commit had one; and a page
/// that several commits change (the last leaf of an index) is copied once for all of them. (A
/// commit whose group split an index page walks the cache too, checkpoint or not: SQLite's b-tree
/// balance numbers a page past the database's end for a moment; `docs/performance.md` says more.)
///
/// A checkpoint that cannot run (another one holds SQLite's checkpoint lock, a reader still
/// needs the pages) is left for the next commit or the writer's own checkpoint: nothing is lost
/// by skipping one, the pages stay in the log, which readers and recovery read.
final class SQLiteCheckpoints: Sendable {
    /// The connection the checkpoints run on: the ledger's file, read-write, outside the pool.
    private let connection: DatabaseQueue
    /// Told of each commit; holds at most one waiting signal.
    private let commits: AsyncStream<Void>.Continuation
    /// The loop that runs a checkpoint after commits.
    private let loop: Task<Void, Never>
    /// Checkpoints that ran to their end (one that found the checkpoint lock held, or failed, is
    /// not counted).
    private let completions = Completions()
    /// The commits told so far.
    private let commitCount = Atomic<Int>(0)

    /// How many commits a checkpoint follows.
    static let commitsPerCheckpoint = 4

    private final class Completions: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Opens the checkpoint connection on `path` (a ledger file in WAL mode) with `configuration`.
    init(path: String, configuration: Configuration) throws {
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        let (signals, commits) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.connection = connection
        self.commits = commits
        let completions = completions
        loop = Task {
            for await _ in signals where (try? await Self.checkpoint(connection)) != nil {
                completions.count.add(1, ordering: .relaxed)
            }
        }
    }

    /// Says a write group committed: after every ``commitsPerCheckpoint`` of them, a checkpoint
    /// runs once the one running (if any) is done.
    func committed() {
        if commitCount.add(1, ordering: .relaxed).newValue % Self.commitsPerCheckpoint == 0 {
            commits.yield()
        }
    }

    /// How many checkpoints the loop ran to their end.
    var completed: Int {
        completions.count.load(ordering: .relaxed)
    }

    /// Runs one passive checkpoint now: the log's size and how much of it is in the database file,
    /// in pages.
    func checkpointNow() async throws -> (logPages: Int, copiedPages: Int) {
        try await Self.checkpoint(connection)
    }

    private static func checkpoint(_ connection: DatabaseQueue) async throws -> (logPages: Int, copiedPages: Int) {
        let result = try await connection.writeWithoutTransaction { try $0.checkpoint(.passive) }
        return (result.walFrameCount, result.checkpointedFrameCount)
    }

    /// Stops the loop after the checkpoint in progress and closes the connection.
    func close() async throws {
        commits.finish()
        await loop.value
        try connection.close()
    }
}
