import Crypto
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``LedgerOperations``, run against every engine and the in-memory implementation.
@Suite("Ledger role: operations")
struct LedgerOperationsContractTests {
    @Test("one reconciliation run of an app at a time; a run whose server stopped is failed by the next",
        arguments: RoleImplementation.all)
    func reconciliationRuns(_ implementation: RoleImplementation) async throws {
        try await implementation.withOperations { store in
            let (first, isNew) = try await store.startReconciliation(
                bundleID: Fixture.bundleID, at: Fixture.at(0), abandonedAfter: 900)
            #expect(isNew)
            #expect(first.state == .running)
            let again = try await store.startReconciliation(bundleID: Fixture.bundleID, at: Fixture.at(60), abandonedAfter: 900)
            #expect(!again.isNew)
            #expect(again.run.id == first.id)
            let other = try await store.startReconciliation(bundleID: "com.example.other", at: Fixture.at(60), abandonedAfter: 900)
            #expect(other.isNew, "each app has its own run")

            var progress = first
            progress.updatedAt = Fixture.at(100)
            progress.counts.notificationsRead = 7
            try await store.updateReconciliation(progress)
            #expect(try await store.reconciliationRun(id: first.id)?.counts.notificationsRead == 7)
            // Quiet for longer than `abandonedAfter`: the next start fails it and starts anew.
            let next = try await store.startReconciliation(bundleID: Fixture.bundleID, at: Fixture.at(1001), abandonedAfter: 900)
            #expect(next.isNew)
            #expect(next.run.id != first.id)
            let abandoned = try #require(try await store.reconciliationRun(id: first.id))
            #expect(abandoned.state == .failed)
            #expect(abandoned.finishedAt == Fixture.at(100))
            #expect(abandoned.failure != nil)

            var done = next.run
            done.state = .completed
            done.updatedAt = Fixture.at(1100)
            done.finishedAt = Fixture.at(1100)
            try await store.updateReconciliation(done)
            #expect(try await store.reconciliationRun(id: next.run.id)?.state == .completed)
            #expect(try await store.reconciliationRuns(bundleID: Fixture.bundleID, limit: 10).map(\.id) == [next.run.id, first.id])
            #expect(try await store.reconciliationRuns(limit: 1).map(\.id) == [next.run.id])
            #expect(try await store.reconciliationRun(id: 999) == nil)
        }
    }

    @Test("the ledger answers, migrates again without harm, and runs background work", arguments: RoleImplementation.backends)
    func answersAndRunsWork(_ implementation: RoleImplementation) async throws {
        try await implementation.withOperations { store in
            try await store.ping()
            try await store.migrate()
            #expect(try await store.exclusively(.reconciliation) { 42 } == 42)
        }
    }

    @Test("content versions are kept and the last upload is the latest", arguments: RoleImplementation.backends)
    func contentPackages(_ implementation: RoleImplementation) async throws {
        try await implementation.withOperations { store in
            func package(_ version: String, _ bytes: Data, at seconds: TimeInterval) -> ContentPackage {
                ContentPackage(
                    bundleID: Fixture.bundleID, productID: "level-pack", version: version,
                    sha256: SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(),
                    size: Int64(bytes.count), uploadedAt: Fixture.at(seconds))
            }
            #expect(try await store.latestContent(bundleID: Fixture.bundleID, productID: "level-pack") == nil)
            let v1 = Data("version one".utf8)
            let v2 = Data(repeating: 7, count: 100_000)
            try await store.putContent(package("1.0", v1, at: 0), bytes: v1)
            try await store.putContent(package("1.1", v2, at: 10), bytes: v2)
            try await store.putContent(package("1.0", v1, at: 20), bytes: v1)
            let latest = try #require(
                try await store.latestContent(bundleID: Fixture.bundleID, productID: "level-pack"))
            #expect(latest.0 == package("1.1", v2, at: 10))
            #expect(latest.1 == v2)

            await #expect(throws: LedgerStoreError(.contentVersionConflict)) {
                try await store.putContent(package("1.0", v2, at: 30), bytes: v2)
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.putContent(package("2.0", v1, at: 30), bytes: v2)
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.putContent(package("2.0", Data(), at: 30), bytes: Data())
            }
            #expect(
                try await store.latestContent(bundleID: Fixture.bundleID, productID: "level-pack")?.0.version == "1.1")
            #expect(try await store.latestContent(bundleID: Fixture.bundleID, productID: "other") == nil)
        }
    }

    @Test("the notification history checkpoint of each app and environment only moves forward", arguments: RoleImplementation.backends)
    func notificationCheckpoints(_ implementation: RoleImplementation) async throws {
        try await implementation.withOperations { store in
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .sandbox) == nil)
            try await store.advanceNotificationCheckpoint(
                bundleID: Fixture.bundleID, environment: .sandbox, to: Fixture.at(100), at: Fixture.at(101))
            try await store.advanceNotificationCheckpoint(
                bundleID: Fixture.bundleID, environment: .sandbox, to: Fixture.at(50), at: Fixture.at(102))
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .sandbox) == Fixture.at(100))
            try await store.advanceNotificationCheckpoint(
                bundleID: Fixture.bundleID, environment: .sandbox, to: Fixture.at(200), at: Fixture.at(201))
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .sandbox) == Fixture.at(200))
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .production) == nil)
            #expect(try await store.notificationCheckpoint(bundleID: "com.example.other", environment: .sandbox) == nil)
        }
    }
}
