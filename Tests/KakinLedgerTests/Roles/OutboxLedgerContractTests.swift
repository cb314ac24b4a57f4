import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``OutboxLedger``, run against every engine and the in-memory outbox.
@Suite("Ledger role: outbox and deliveries")
struct OutboxLedgerContractTests {
    @Test("deliveries are tracked per endpoint with retry times", arguments: RoleImplementation.backends)
    func deliveries(_ implementation: RoleImplementation) async throws {
        try await implementation.withOutbox { store, writeEvents in
            try await writeEvents(3, "alice")
            let a = "https://a.example/hook"
            let b = "https://b.example/hook"
            let all = try await store.dueEvents(endpoint: a, now: Fixture.at(0), limit: 10)
            #expect(all.count == 3)
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(0.01), limit: 2) == Array(all.prefix(2)))
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(0.02), limit: 0).isEmpty)

            try await store.markDelivery(
                eventID: all[0].id, endpoint: a, delivered: true, at: Fixture.at(1), retryAt: nil)
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: false, at: Fixture.at(1), retryAt: Fixture.at(61))
            try await store.markDelivery(
                eventID: all[2].id, endpoint: a, delivered: false, at: Fixture.at(1), retryAt: nil)
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(60), limit: 10).isEmpty)
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(61), limit: 10) == [all[1]])
            #expect(try await store.dueEvents(endpoint: b, now: Fixture.at(0), limit: 10) == all)

            // A second failure moves the retry; a success ends it; a late failure report changes nothing.
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: false, at: Fixture.at(61), retryAt: Fixture.at(181))
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(120), limit: 10).isEmpty)
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: true, at: Fixture.at(181), retryAt: nil)
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: false, at: Fixture.at(182), retryAt: Fixture.at(183))
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(1000), limit: 10).isEmpty)

            await #expect(throws: (any Error).self) {
                try await store.markDelivery(
                    eventID: 999, endpoint: a, delivered: true, at: Fixture.at(1), retryAt: nil)
            }
        }
    }

    @Test("a holder takes back the events it holds, and no one else does before the lease ends",
          arguments: RoleImplementation.backends)
    func holderTakesBack(_ implementation: RoleImplementation) async throws {
        try await implementation.withOutbox { store, writeEvents in
            try await writeEvents(3, "alice")
            let endpoint = "https://a.example/hook"
            // The claim committed, but its answer never reached the holder.
            let lost = try await store.claimDueEvents(
                endpoint: endpoint, holder: "server-1", now: Fixture.at(0), limit: 2, leaseUntil: Fixture.at(300))
            #expect(lost.count == 2)
            let others = try await store.claimDueEvents(
                endpoint: endpoint, holder: "server-2", now: Fixture.at(5), limit: 10, leaseUntil: Fixture.at(305))
            #expect(others.count == 1)
            #expect(Set(others.map(\.id)).isDisjoint(with: lost.map(\.id)), "another holder waits for the lease")
            let back = try await store.claimDueEvents(
                endpoint: endpoint, holder: "server-1", now: Fixture.at(10), limit: 10, leaseUntil: Fixture.at(310))
            #expect(back.map(\.id) == lost.map(\.id), "its next run takes back what it holds, and only that")
            try await store.markDeliveries(
                back.map { DeliveryAttempt(eventID: $0.id, delivered: true, at: Fixture.at(11), retryAt: nil) },
                endpoint: endpoint)
            #expect(
                try await store.claimDueEvents(
                    endpoint: endpoint, holder: "server-1", now: Fixture.at(12), limit: 10, leaseUntil: Fixture.at(312)
                ).isEmpty, "delivered events are not taken back")
            #expect(
                try await store.claimDueEvents(
                    endpoint: endpoint, holder: "server-1", now: Fixture.at(305), limit: 10, leaseUntil: Fixture.at(600)
                ).map(\.id) == others.map(\.id), "another holder's lease, once ended, is anyone's")
        }
    }

    @Test("an event that keeps failing holds back no other, and the backlog counts what is left", arguments: RoleImplementation.backends)
    func failingEventHoldsNothingBack(_ implementation: RoleImplementation) async throws {
        try await implementation.withOutbox { store, writeEvents in
            let endpoint = "https://a.example/hook"
            func record(_ range: Range<Int>) async throws { try await writeEvents(range.count, "alice") }
            func deliver(_ events: [LedgerEvent], at seconds: TimeInterval) async throws {
                try await store.markDeliveries(
                    events.map { DeliveryAttempt(eventID: $0.id, delivered: true, at: Fixture.at(seconds), retryAt: nil) },
                    endpoint: endpoint)
            }
            try await record(0..<5)
            let first = try await store.dueEvents(endpoint: endpoint, now: Fixture.at(0), limit: 10)
            #expect(first.count == 5)
            try await store.markDelivery(
                eventID: first[0].id, endpoint: endpoint, delivered: false, at: Fixture.at(1), retryAt: Fixture.at(1000))
            try await deliver(Array(first.dropFirst()), at: 1)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 1)

            // Events written after the failure are taken oldest first, a batch at a time.
            try await record(5..<8)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 4)
            let next = try await store.dueEvents(endpoint: endpoint, now: Fixture.at(10), limit: 2)
            #expect(next.count == 2)
            #expect(next.allSatisfy { $0.id > first[4].id })
            #expect(next.map(\.id) == next.map(\.id).sorted())
            try await deliver(next, at: 11)
            let last = try await store.dueEvents(endpoint: endpoint, now: Fixture.at(20), limit: 10)
            #expect(last.count == 1)
            #expect(last.allSatisfy { $0.id > next[1].id })
            try await deliver(last, at: 21)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 1)
            #expect(try await store.dueEvents(endpoint: endpoint, now: Fixture.at(999), limit: 10).isEmpty)

            // The failed event comes back at its retry time, alone.
            #expect(try await store.dueEvents(endpoint: endpoint, now: Fixture.at(1000), limit: 10) == [first[0]])
            try await deliver([first[0]], at: 1001)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 0)
            #expect(try await store.dueEvents(endpoint: endpoint, now: Fixture.at(2000), limit: 10).isEmpty)
            // Another endpoint still gets every event.
            #expect(try await store.dueEvents(endpoint: "https://b.example/hook", now: Fixture.at(0), limit: 20).count == 8)
        }
    }
}
