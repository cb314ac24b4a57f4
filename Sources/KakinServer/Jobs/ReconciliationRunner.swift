public import KakinLedger
public import ServiceLifecycle

/// Runs reconciliations asked for on demand in the background, so that the request that asks
/// answers at once with a run to follow (`GET /v1/admin/reconcile/runs/{id}`, the dashboard's
/// activity page). One run of an app at a time in this server: asking again while one goes on
/// answers that run; servers sharing a PostgreSQL database take turns with the periodic job.
public actor ReconciliationRunner {
    /// What does the work.
    public let reconciler: Reconciler
    private var tasks: [Int64: Task<ReconciliationRun, Never>] = [:]
    private var running: [String: Int64] = [:]

    /// Creates a runner over `reconciler`.
    public init(reconciler: Reconciler) {
        self.reconciler = reconciler
    }

    /// Starts a run of `bundleID` in the background, unless a run of the app started here still
    /// goes on; returns the run as it starts. Throws when the app cannot be reconciled (unknown,
    /// or no App Store Server API key).
    public func start(bundleID: String) async throws -> ReconciliationRun {
        let store = reconciler.service.store
        if let id = running[bundleID], let run = try await store.reconciliationRun(id: id), run.state == .running {
            return run
        }
        let run = try await reconciler.start(bundleID: bundleID)
        let reconciler = reconciler
        running[bundleID] = run.id
        tasks[run.id] = Task {
            let ended: ReconciliationRun
            do {
                if let done = try await store.exclusively(.reconciliation, { await reconciler.carryOut(run) }) {
                    ended = done
                } else {
                    ended = await Self.fail(
                        run, "another server sharing the database was reconciling; it reads the same events",
                        reconciler: reconciler)
                }
            } catch {
                ended = await Self.fail(run, ServerError(error).message, reconciler: reconciler)
            }
            self.ended(run)
            return ended
        }
        return run
    }

    /// Waits for a run to end and returns it as it ended (or as it is, when another server runs
    /// it); `nil` for an unknown run.
    public func wait(for id: Int64) async throws -> ReconciliationRun? {
        if let task = tasks[id] { return await task.value }
        return try await reconciler.service.store.reconciliationRun(id: id)
    }

    /// Stops the runs going on here and waits until each has recorded its end (as failed, at its
    /// next request to Apple).
    public func stop() async {
        let going = Array(tasks.values)
        for task in going { task.cancel() }
        for task in going { _ = await task.value }
    }

    private func ended(_ run: ReconciliationRun) {
        if running[run.bundleID] == run.id { running[run.bundleID] = nil }
        tasks[run.id] = nil
    }

    /// Records a run as failed, saying why.
    private static func fail(
        _ run: ReconciliationRun, _ failure: String, reconciler: Reconciler
    ) async -> ReconciliationRun {
        var failed = run
        (failed.state, failed.failure) = (.failed, failure)
        failed.updatedAt = max(reconciler.service.now(), run.startedAt)
        failed.finishedAt = failed.updatedAt
        try? await reconciler.service.store.updateReconciliation(failed)
        return failed
    }
}

extension ReconciliationRunner: Service {
    /// Waits for the server's graceful shutdown, then stops the runs going on, before the ledger
    /// closes.
    public nonisolated func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }
}
