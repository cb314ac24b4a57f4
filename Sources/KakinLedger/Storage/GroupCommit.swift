import Synchronization

/// An engine that can commit several write jobs in one database transaction.
package protocol GroupCommitEngine: Sendable {
    /// One write: what it does inside the transaction the engine opens for its group.
    associatedtype Job: Sendable

    /// Runs `jobs` in one transaction, in order, and commits it; one result per job.
    ///
    /// When `isolated` is false, the first job that throws ends the attempt: the transaction is
    /// rolled back and the error thrown. When `isolated` is true, each job runs in a savepoint of
    /// its own: a job that throws is rolled back alone and gets its error, the others commit.
    /// An error thrown from the commit itself is thrown.
    func commit(_ jobs: [Job], isolated: Bool) async throws -> [Result<any Sendable, any Error>]
}

/// Write jobs that arrive while the database commits wait together and are committed together,
/// in one transaction: one commit (one flush to disk, one round trip) for a whole group instead
/// of one each. (An engine may run reads this way too: PostgreSQL's lookups by digest wait
/// together and run as one statement.)
///
/// A group runs first as it is. When one of its jobs fails, the group is rolled back and runs
/// again with a savepoint per job, so that the failing job alone is undone and the others commit;
/// a job is answered only once the commit that holds it has returned.
package final class GroupCommit<Engine: GroupCommitEngine>: Sendable {
    private struct Waiting: Sendable {
        let job: Engine.Job
        let continuation: CheckedContinuation<any Sendable, any Error>
    }

    private struct State: Sendable {
        var waiting: [Waiting] = []
        var committing = false
        var closed = false
        var idle: [CheckedContinuation<Void, Never>] = []
    }

    private let engine: Engine
    private let largestGroup: Int
    private let executor: (any TaskExecutor)?
    private let state = Mutex(State())

    /// A queue that commits at most `largestGroup` jobs together through `engine`; its groups run
    /// on `executor` when one is given.
    package init(_ engine: Engine, largestGroup: Int = 64, executor: (any TaskExecutor)? = nil) {
        self.engine = engine
        self.largestGroup = max(1, largestGroup)
        self.executor = executor
    }

    /// Queues `job` and returns its result once the transaction holding it has committed, or its
    /// error once it was rolled back.
    package func submit(_ job: Engine.Job) async throws -> any Sendable {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool? in
                guard !state.closed else { return nil }
                state.waiting.append(Waiting(job: job, continuation: continuation))
                defer { state.committing = true }
                return !state.committing
            }
            switch start {
            case nil: continuation.resume(throwing: LedgerStoreError(.unavailable, "the ledger was shut down"))
            case true?: Task(executorPreference: executor) { await self.drain() }
            case false?: break
            }
        }
    }

    /// How many jobs wait for the next group.
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Refuses new jobs, and returns once the jobs queued before are answered.
    package func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                state.closed = true
                guard state.committing else { return true }
                state.idle.append(done)
                return false
            }
            if idle { done.resume() }
        }
    }

    /// Commits groups until no job waits.
    private func drain() async {
        while let group = nextGroup() {
            let results = await commit(group.map(\.job))
            for (waiting, result) in zip(group, results) { waiting.continuation.resume(with: result) }
        }
    }

    private func nextGroup() -> [Waiting]? {
        let (group, idle) = state.withLock { state -> ([Waiting], [CheckedContinuation<Void, Never>]) in
            let group = Array(state.waiting.prefix(largestGroup))
            state.waiting.removeFirst(group.count)
            guard group.isEmpty else { return (group, []) }
            state.committing = false
            defer { state.idle = [] }
            return ([], state.idle)
        }
        for waiter in idle { waiter.resume() }
        return group.isEmpty ? nil : group
    }

    /// One group: as it is, then, when a job failed, with a savepoint per job.
    private func commit(_ jobs: [Engine.Job]) async -> [Result<any Sendable, any Error>] {
        do {
            return try await engine.commit(jobs, isolated: false)
        } catch {
            guard jobs.count > 1 else { return [.failure(error)] }
        }
        do {
            return try await engine.commit(jobs, isolated: true)
        } catch {
            return Array(repeating: .failure(error), count: jobs.count)
        }
    }
}

/// A write a ledger's writer commits: an ingest, which the writer records together with the
/// ingests next to it in its group (``IngestStatements/ingest(_:)``), or any other job.
enum LedgerWrite<Job: Sendable>: Sendable {
    case ingest(LedgerIngest)
    case run(Job)

    /// What a group of writes comes to, in order: each run of consecutive ingests, and each job.
    enum Step {
        case ingests([LedgerIngest])
        case job(Job)
    }

    /// `writes` in order, consecutive ingests together.
    static func steps(_ writes: [Self]) -> [Step] {
        var steps: [Step] = []
        var ingests: [LedgerIngest] = []
        for write in writes {
            switch write {
            case .ingest(let change): ingests.append(change)
            case .run(let job):
                if !ingests.isEmpty { steps.append(.ingests(ingests)) }
                ingests = []
                steps.append(.job(job))
            }
        }
        return ingests.isEmpty ? steps : steps + [.ingests(ingests)]
    }
}
