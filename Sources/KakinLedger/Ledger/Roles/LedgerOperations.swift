public import AppStoreModels
public import Foundation

/// Running the ledger: its schema, its life, background work one server at a time, the
/// reconciliation runs and their checkpoints in Apple's notification history, and the hosted
/// content packages.
///
/// One role of ``LedgerStore``.
public protocol LedgerOperations: Sendable {
    /// Creates or upgrades the schema (append-only migrations).
    func migrate() async throws

    /// Waits for the operations in flight, then closes what the store opened.
    func shutdown() async throws

    /// Returns when the database answers; throws when it cannot be reached.
    func ping() async throws

    /// Runs `body` unless another server sharing the database runs `job` now; `nil` when it did not run.
    func exclusively<R: Sendable>(_ job: ExclusiveJob, _ body: @escaping @Sendable () async throws -> R)
        async throws -> R?

    /// Records that a reconciliation of `bundleID` starts at `date`, and returns the run with its
    /// ID, unless a run of the app goes on: then that run, with `isNew` false (one run of an app
    /// at a time, whichever server started it). A run still `running` whose counts were not
    /// brought up to date in the `abandonedAfter` seconds before `date` (its server stopped) is
    /// recorded as failed first.
    func startReconciliation(bundleID: String, at date: Date, abandonedAfter: TimeInterval) async throws
        -> (run: ReconciliationRun, isNew: Bool)

    /// Brings a run's state, counts, end and failure up to date, by its ID.
    func updateReconciliation(_ run: ReconciliationRun) async throws

    /// A reconciliation run by its ID.
    func reconciliationRun(id: Int64) async throws -> ReconciliationRun?

    /// The newest reconciliation runs, newest first; of one app when `bundleID` is given.
    func reconciliationRuns(bundleID: String?, limit: Int) async throws -> [ReconciliationRun]

    /// Until when reconciliation has read Apple's notification history for an app's environment;
    /// `nil` before the first read.
    func notificationCheckpoint(bundleID: String, environment: AppStoreEnvironment) async throws -> Date?

    /// Moves the checkpoint of an app's environment forward to `readUntil`; a checkpoint already
    /// later stays.
    func advanceNotificationCheckpoint(
        bundleID: String, environment: AppStoreEnvironment, to readUntil: Date, at date: Date
    ) async throws

    /// Stores a content package's bytes and metadata (a new version replaces nothing: versions are kept).
    func putContent(_ package: ContentPackage, bytes: Data) async throws

    /// The latest version of a product's package and its bytes.
    func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)?
}

extension LedgerOperations {
    /// The newest reconciliation runs of every app, newest first.
    public func reconciliationRuns(limit: Int) async throws -> [ReconciliationRun] {
        try await reconciliationRuns(bundleID: nil, limit: limit)
    }
}

/// Background work that one server at a time runs, when several share a database.
public enum ExclusiveJob: String, Sendable, CaseIterable {
    /// Reconciling the ledger with the App Store Server API.
    case reconciliation
}
