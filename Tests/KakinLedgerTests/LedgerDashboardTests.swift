import AppStoreModels
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

@Suite("Ledger: the dashboard's reads")
struct LedgerDashboardTests {
    @Test("deliveries and reconciliation runs, newest first, by customer", arguments: StoreKind.allCases)
    func activity(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.record(Fixture.transaction("t2", user: "bob"), grants: [])
            _ = try await store.revoke(
                transactionID: "t1", at: Fixture.at(5), reason: 1, grants: [], policy: .clampAtZero)

            let events = try await store.dueEvents(endpoint: "https://hooks.example/a", now: Fixture.at(10), limit: 10)
            let first = try #require(events.first)
            try await store.markDelivery(
                eventID: first.id, endpoint: "https://hooks.example/a", delivered: false, at: Fixture.at(11),
                retryAt: Fixture.at(70))
            let deliveries = try await store.webhookDeliveries(bundleID: nil, appUserID: "alice", limit: 50)
            #expect(!deliveries.isEmpty)
            #expect(deliveries.allSatisfy { $0.appUserID == "alice" })
            let attempted = try #require(deliveries.first { $0.eventID == first.id })
            #expect(attempted.attempts == 1)
            #expect(attempted.nextAttemptAt == Fixture.at(70))
            #expect(attempted.deliveredAt == nil)
            #expect(deliveries.map(\.eventID) == deliveries.map(\.eventID).sorted(by: >))

            // A run is recorded as it starts and brought up to date as it goes.
            var (completed, isNew) = try await store.startReconciliation(
                bundleID: Fixture.bundleID, at: Fixture.at(20), abandonedAfter: 900)
            #expect(isNew && completed.state == .running && completed.finishedAt == nil && completed.id > 0)
            // One run of an app at a time: starting again answers the run going on.
            let again = try await store.startReconciliation(
                bundleID: Fixture.bundleID, at: Fixture.at(20.5), abandonedAfter: 900)
            #expect(!again.isNew && again.run == completed)
            #expect(
                try await store.startReconciliation(
                    bundleID: "com.example.other", at: Fixture.at(20.5), abandonedAfter: 900
                ).isNew, "another app's run is its own")
            completed.counts.transactionsSeen = 3
            completed.counts.notificationsRead = 5
            completed.updatedAt = Fixture.at(21)
            try await store.updateReconciliation(completed)
            #expect(try await store.reconciliationRun(id: completed.id) == completed)
            (completed.state, completed.finishedAt, completed.counts.transactionsRecorded) = (.completed, Fixture.at(21), 1)
            try await store.updateReconciliation(completed)
            var failed = try await store.startReconciliation(
                bundleID: Fixture.bundleID, at: Fixture.at(30), abandonedAfter: 900).run
            #expect(failed.id > completed.id, "a new run once the last one ended")
            (failed.state, failed.finishedAt, failed.failure) = (.failed, Fixture.at(30), "the API did not answer")
            try await store.updateReconciliation(failed)
            let runs = try await store.reconciliationRuns(limit: 10).filter { $0.bundleID == Fixture.bundleID }
            #expect(runs == [failed, completed])
            #expect(try await store.reconciliationRun(id: failed.id + 100) == nil)

            // A run left running, its counts not brought up to date for longer than allowed, is
            // failed by the app's next start, which starts a run; a recent one is left alone.
            let orphan = try await store.startReconciliation(
                bundleID: Fixture.bundleID, at: Fixture.at(40), abandonedAfter: 900).run
            #expect(
                try await store.startReconciliation(
                    bundleID: Fixture.bundleID, at: Fixture.at(40 + 600), abandonedAfter: 900
                ).run == orphan, "not abandoned yet")
            let next = try await store.startReconciliation(
                bundleID: Fixture.bundleID, at: Fixture.at(40 + 901), abandonedAfter: 900)
            #expect(next.isNew && next.run.id != orphan.id)
            let abandoned = try #require(try await store.reconciliationRun(id: orphan.id))
            #expect(abandoned.state == .failed && abandoned.finishedAt == Fixture.at(40))
            #expect(try await store.reconciliationRun(id: next.run.id)?.state == .running)
        }
    }
}
