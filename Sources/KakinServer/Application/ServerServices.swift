import Foundation
import KakinLedger
public import Logging
public import ServiceLifecycle

/// Keeps the ledger open while the server runs and closes it last: it is the first service of
/// the group, so on shutdown it stops after the HTTP server has drained its requests.
public struct LedgerStoreService: Service {
    /// The ledger to close once the other services have stopped.
    public let store: any LedgerStore

    /// Creates the service that keeps `store` open.
    public init(store: any LedgerStore) {
        self.store = store
    }

    public func run() async throws {
        // Returns on graceful shutdown, throws on cancellation (another service failed, say the
        // port was taken): close the store either way, outside the cancelled task.
        try? await gracefulShutdown()
        let store = self.store
        try await Task { try await store.shutdown() }.value
    }
}

/// Runs a job now and then every `interval` until shutdown: webhook delivery, reconciliation,
/// the sandbox's renewals and notifications. A failing run is logged and tried again next time;
/// a run in progress is finished before the service stops.
public struct PeriodicJob: Service {
    /// The job's name, in its log lines.
    public let name: String
    /// The pause between the end of one run and the start of the next.
    public let interval: Duration
    /// Where a failing run is logged, at `warning`.
    public let logger: Logger
    /// Whether the first run waits one interval (jobs that need the migrated database wait).
    public let waitsFirst: Bool
    /// One run of the job.
    public let body: @Sendable () async throws -> Void

    /// Creates a job that runs `body` every `interval`.
    public init(
        name: String, every interval: Duration, waitsFirst: Bool = false, logger: Logger,
        _ body: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.interval = interval
        self.waitsFirst = waitsFirst
        self.logger = logger
        self.body = body
    }

    public func run() async throws {
        if waitsFirst {
            do {
                let interval = self.interval
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
        }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do { try await body() } catch {
                logger.warning("job failed", metadata: ["job": "\(name)", "error": "\(error)"])
            }
            do {
                let interval = self.interval
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
        }
    }
}
