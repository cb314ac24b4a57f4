import AppStoreModels
import Foundation
@testable import KakinLedger

/// The ledger's operations kept in memory: ``LedgerOperations`` for tests of what uses the role
/// (reconciliation's runs and checkpoints, hosted content, background work one at a time), run
/// without a database. Instants are kept in whole milliseconds, as the engines store them.
public actor InMemoryLedgerOperations: LedgerOperations {
    private struct CheckpointKey: Hashable {
        var bundleID: String
        var environment: AppStoreEnvironment
    }

    private var runs: [ReconciliationRun] = []
    private var checkpoints: [CheckpointKey: Date] = [:]
    private var content: [(package: ContentPackage, bytes: Data)] = []
    private var running: Set<ExclusiveJob> = []
    /// Whether ``shutdown()`` was called: every call after it is refused, as an engine's is.
    private var closed = false

    /// An empty ledger.
    public init() {}

    public func migrate() async throws { try open() }

    public func shutdown() async throws { closed = true }

    public func ping() async throws { try open() }

    public func exclusively<R: Sendable>(
        _ job: ExclusiveJob, _ body: nonisolated(nonsending) @escaping @Sendable () async throws -> R
    ) async throws -> R? {
        try open()
        guard running.insert(job).inserted else { return nil }
        defer { running.remove(job) }
        return try await body()
    }

    public func startReconciliation(
        bundleID: String, at date: Date, abandonedAfter: TimeInterval
    ) async throws -> (run: ReconciliationRun, isNew: Bool) {
        try open()
        let date = stored(date)
        let stale = date.addingTimeInterval(-abandonedAfter)
        for index in runs.indices
        where runs[index].bundleID == bundleID && runs[index].state == .running && runs[index].updatedAt < stale {
            runs[index].state = .failed
            runs[index].finishedAt = max(runs[index].updatedAt, runs[index].startedAt)
            runs[index].failure = "the server running it stopped before it ended"
        }
        if let going = runs.first(where: { $0.bundleID == bundleID && $0.state == .running }) { return (going, false) }
        let run = ReconciliationRun(id: Int64(runs.count + 1), bundleID: bundleID, startedAt: date)
        runs.append(run)
        return (run, true)
    }

    public func updateReconciliation(_ run: ReconciliationRun) async throws {
        try open()
        guard let index = runs.firstIndex(where: { $0.id == run.id }) else { return }
        var updated = runs[index]
        updated.state = run.state
        updated.updatedAt = stored(run.updatedAt)
        updated.finishedAt = run.finishedAt.map(stored)
        updated.failure = run.failure
        updated.counts = run.counts
        runs[index] = updated
    }

    public func reconciliationRun(id: Int64) async throws -> ReconciliationRun? {
        try open()
        return runs.first { $0.id == id }
    }

    public func reconciliationRuns(bundleID: String?, limit: Int) async throws -> [ReconciliationRun] {
        try open()
        return Array(runs.reversed().filter { bundleID == nil || $0.bundleID == bundleID }.prefix(limit))
    }

    public func notificationCheckpoint(bundleID: String, environment: AppStoreEnvironment) async throws -> Date? {
        try open()
        return checkpoints[CheckpointKey(bundleID: bundleID, environment: environment)]
    }

    public func advanceNotificationCheckpoint(
        bundleID: String, environment: AppStoreEnvironment, to readUntil: Date, at date: Date
    ) async throws {
        try open()
        let key = CheckpointKey(bundleID: bundleID, environment: environment)
        checkpoints[key] = max(checkpoints[key] ?? .distantPast, stored(readUntil))
    }

    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        try open()
        let digest = try LedgerRules.validateContent(package, bytes: bytes)
        if let kept = content.first(where: {
            $0.package.bundleID == package.bundleID && $0.package.productID == package.productID
                && $0.package.version == package.version
        }) {
            guard kept.package.sha256 == digest else {
                throw LedgerStoreError(
                    .contentVersionConflict,
                    "content \(package.productID) \(package.version) was already uploaded with other bytes")
            }
            return
        }
        let kept = ContentPackage(
            bundleID: package.bundleID, productID: package.productID, version: package.version, sha256: digest,
            size: package.size, uploadedAt: stored(package.uploadedAt))
        content.append((kept, bytes))
    }

    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        try open()
        return content.filter { $0.package.bundleID == bundleID && $0.package.productID == productID }
            .max { ($0.package.uploadedAt, $0.package.version) < ($1.package.uploadedAt, $1.package.version) }
            .map { ($0.package, $0.bytes) }
    }

    /// Refuses a call after ``shutdown()``.
    private func open() throws {
        guard !closed else { throw LedgerStoreError(.unavailable, "the ledger was shut down") }
    }
}
