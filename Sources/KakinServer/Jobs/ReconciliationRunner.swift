public import KakinLedger
public import ServiceLifecycle

/// Runs reconciliations asked for on demand in the background, so that the request that asks
/// answers at once with a run to follow (`GET /v1/admin/reconcile/runs/{id}`, the dashboard's
/// activity page). One run of an app goes on at a time, whichever server started it (the
/// periodic job included): asking while one goes on answers that run.
public actor ReconciliationRunner {
    /// What does the work.
    public let reconciler: Reconciler
    private var tasks: [Int64: Task<ReconciliationRun, Never>] = [:]

    /// Creates a runner over `reconciler`.
    public init(reconciler: Reconciler) {
        self.reconciler = reconciler
    }

    /// Starts a run of `bundleID` in the background, unless a run of the app goes on; returns the
    /// run as it starts, or the one going on. Throws when the app cannot be reconciled (unknown,
    /// or no App Store Server API key).
    public func start(bundleID: String) async throws -> ReconciliationRun {
        let (run, isNew) = try await reconciler.start(bundleID: bundleID)
        guard isNew else { return run }
        let reconciler = reconciler
        tasks[run.id] = Task {
            let ended = await reconciler.carryOut(run)
            self.ended(run)
            return ended
        }
        return run
    }

    /// Waits for a run to end and returns it as it ended (or as it is, when another server runs
    /// it); `nil` for an unknown run.
    public func wait(for id: Int64) async throws -> ReconciliationRun? {
        if let task = tasks[id] { return await task.value }
        return try await reconciler.run(id: id)
    }

    /// Stops the runs going on here and waits until each has recorded its end (as failed, at its
    /// next request to Apple).
    public func stop() async {
        let going = Array(tasks.values)
        for task in going { task.cancel() }
        for task in going { _ = await task.value }
    }

    private func ended(_ run: ReconciliationRun) {
        tasks[run.id] = nil
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
