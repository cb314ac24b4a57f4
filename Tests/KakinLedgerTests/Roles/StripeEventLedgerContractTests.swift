import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``StripeEventLedger``, run against every engine and the in-memory
/// implementation: an event recorded once per app, the events to apply in their order, marked
/// applied or failed, the newest event of each app, and the arguments refused.
@Suite("Ledger role: Stripe events")
struct StripeEventLedgerContractTests {
    private static let otherApp = "com.example.other"

    /// An event made at `seconds` (Stripe's `created` is in whole seconds), received a second later.
    private static func event(
        _ id: String, at seconds: TimeInterval, bundleID: String = Fixture.bundleID, type: String = "invoice.paid",
        payload: String? = nil
    ) -> StripeEventRecord {
        StripeEventRecord(
            bundleID: bundleID, eventID: id, type: type, objectID: "in_\(id)", livemode: false,
            createdAt: Fixture.at(seconds), receivedAt: Fixture.at(seconds + 1),
            payload: payload ?? #"{"id":"\#(id)","object":"event","type":"\#(type)"}"#)
    }

    /// The IDs of the app's events to apply, in order.
    private static func toApply(
        _ ledger: any StripeEventLedger, bundleID: String = Fixture.bundleID, limit: Int = 100
    ) async throws -> [String] {
        try await ledger.stripeEventsToApply(bundleID: bundleID, limit: limit).map(\.eventID)
    }

    /// The cause of the ledger error `operation` throws, expecting it to be an invalid argument.
    private static func invalidArgument(
        _ operation: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String? {
        let error = try #require(
            await #expect(throws: LedgerStoreError.self, sourceLocation: sourceLocation) { try await operation() },
            sourceLocation: sourceLocation)
        #expect(error.code == .invalidArgument, "\(error)", sourceLocation: sourceLocation)
        return error.cause
    }

    @Test(
        "an event is recorded once per app and event ID, read back whole, and not changed by a second delivery",
        arguments: RoleImplementation.all)
    func recordedOnce(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            var paid = Self.event("evt_1", at: 10)
            paid.livemode = true
            paid.createdAt = Fixture.at(10.25)
            #expect(try await ledger.recordStripeEvent(paid))
            var again = Self.event("evt_1", at: 99, type: "invoice.voided", payload: #"{"id":"evt_1","again":true}"#)
            again.objectID = nil
            #expect(try await !ledger.recordStripeEvent(again), "Stripe's delivery again is recorded once")
            let stored = try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_1")
            #expect(stored == paid, "the payload, type and object of the first delivery are kept")
            #expect(try await ledger.stripeEventsToApply(bundleID: Fixture.bundleID, limit: 10) == [paid])

            // An event without an object ID, of test mode, reads back as recorded too.
            var bare = Self.event("evt_2", at: 20)
            bare.objectID = nil
            #expect(try await ledger.recordStripeEvent(bare))
            #expect(try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_2") == bare)
            #expect(try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_3") == nil)
        }
    }

    @Test("the same event ID under two apps is two events, each applied on its own", arguments: RoleImplementation.all)
    func perApp(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            #expect(try await ledger.recordStripeEvent(Self.event("evt_1", at: 10)))
            #expect(try await ledger.recordStripeEvent(Self.event("evt_1", at: 30, bundleID: Self.otherApp)))
            #expect(try await ledger.recordStripeEvent(Self.event("evt_2", at: 20)))
            #expect(try await Self.toApply(ledger) == ["evt_1", "evt_2"])
            #expect(try await Self.toApply(ledger, bundleID: Self.otherApp) == ["evt_1"])

            try await ledger.markStripeEventApplied(bundleID: Self.otherApp, eventID: "evt_1", at: Fixture.at(40))
            #expect(try await Self.toApply(ledger) == ["evt_1", "evt_2"], "the other app's event is its own")
            #expect(try await Self.toApply(ledger, bundleID: Self.otherApp).isEmpty)
            #expect(try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_1")?.appliedAt == nil)
            #expect(try await ledger.stripeEventsToApply(bundleID: "com.example.none", limit: 10).isEmpty)
        }
    }

    @Test(
        "the events to apply come oldest first, by when Stripe made them then by ID byte by byte, at most the limit",
        arguments: RoleImplementation.all)
    func order(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            // Recorded out of order; three made in the same second, their IDs in mixed case.
            for (id, seconds) in [("evt_c", 10.0), ("evt_z", 5), ("evt_0", 20), ("evt_a", 5), ("evt_B", 5)] {
                #expect(try await ledger.recordStripeEvent(Self.event(id, at: seconds)))
            }
            #expect(try await ledger.recordStripeEvent(Self.event("evt_early", at: 1, bundleID: Self.otherApp)))
            let all = try await Self.toApply(ledger)
            #expect(all == ["evt_B", "evt_a", "evt_z", "evt_c", "evt_0"])
            #expect(try await Self.toApply(ledger, limit: 2) == ["evt_B", "evt_a"])
            #expect(try await Self.toApply(ledger, limit: 1) == ["evt_B"])
        }
    }

    @Test(
        "an event marked applied leaves the events to apply, and marked again keeps its first time",
        arguments: RoleImplementation.all)
    func applied(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            for (id, seconds) in [("evt_1", 10.0), ("evt_2", 20), ("evt_3", 30)] {
                #expect(try await ledger.recordStripeEvent(Self.event(id, at: seconds)))
            }
            try await ledger.markStripeEventApplied(bundleID: Fixture.bundleID, eventID: "evt_2", at: Fixture.at(100))
            #expect(try await Self.toApply(ledger) == ["evt_1", "evt_3"])
            try await ledger.markStripeEventApplied(bundleID: Fixture.bundleID, eventID: "evt_2", at: Fixture.at(200))
            let applied = try #require(try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_2"))
            #expect(applied.appliedAt == Fixture.at(100), "marked again, it keeps the first time")
            #expect(applied.payload == Self.event("evt_2", at: 20).payload)

            // An event recorded as applied already is none to apply.
            var backfilled = Self.event("evt_0", at: 1)
            backfilled.appliedAt = Fixture.at(2)
            #expect(try await ledger.recordStripeEvent(backfilled))
            #expect(try await Self.toApply(ledger) == ["evt_1", "evt_3"])
        }
    }

    @Test(
        "a failed event counts its attempts, keeps its last failure and stays to apply, in its place",
        arguments: RoleImplementation.all)
    func failed(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            for (id, seconds) in [("evt_1", 10.0), ("evt_2", 20)] {
                #expect(try await ledger.recordStripeEvent(Self.event(id, at: seconds)))
            }
            try await ledger.markStripeEventFailed(bundleID: Fixture.bundleID, eventID: "evt_1", failure: "no customer")
            try await ledger.markStripeEventFailed(
                bundleID: Fixture.bundleID, eventID: "evt_1", failure: "Stripe unavailable")
            let pending = try await ledger.stripeEventsToApply(bundleID: Fixture.bundleID, limit: 10)
            #expect(pending.map(\.eventID) == ["evt_1", "evt_2"], "a failed event keeps its place")
            #expect(pending.map(\.attempts) == [2, 0])
            #expect(pending.map(\.failure) == ["Stripe unavailable", nil])
            let next = try await ledger.stripeEventsToApply(bundleID: Fixture.bundleID, after: pending[0], limit: 10)
            #expect(next.map(\.eventID) == ["evt_2"], "the next page starts after the failed event")
            #expect(try await ledger.stripeEventsToApply(bundleID: Fixture.bundleID, after: pending[1], limit: 10).isEmpty)

            // Applied at last: its failure is cleared, its attempts kept, and a late failure changes nothing.
            try await ledger.markStripeEventApplied(bundleID: Fixture.bundleID, eventID: "evt_1", at: Fixture.at(50))
            try await ledger.markStripeEventFailed(bundleID: Fixture.bundleID, eventID: "evt_1", failure: "late")
            let applied = try #require(try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_1"))
            #expect(applied.failure == nil)
            #expect(applied.attempts == 2)
            #expect(applied.appliedAt == Fixture.at(50))
            #expect(try await Self.toApply(ledger) == ["evt_2"])
        }
    }

    @Test(
        "marking an event the ledger does not hold for the app is an invalid argument, unknownStripeEvent",
        arguments: RoleImplementation.all)
    func unknownEvent(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            #expect(try await ledger.recordStripeEvent(Self.event("evt_1", at: 10, bundleID: Self.otherApp)))
            for eventID in ["evt_1", "evt_never"] {
                let applied = try await Self.invalidArgument {
                    try await ledger.markStripeEventApplied(
                        bundleID: Fixture.bundleID, eventID: eventID, at: Fixture.at(20))
                }
                #expect(applied == "unknownStripeEvent")
                let failed = try await Self.invalidArgument {
                    try await ledger.markStripeEventFailed(bundleID: Fixture.bundleID, eventID: eventID, failure: "x")
                }
                #expect(failed == "unknownStripeEvent")
            }
            // Nothing was recorded by the marks, and the other app's event is untouched.
            #expect(try await Self.toApply(ledger).isEmpty)
            let other = try await ledger.stripeEventsToApply(bundleID: Self.otherApp, limit: 10)
            #expect(other.map(\.eventID) == ["evt_1"])
            #expect(other.map(\.attempts) == [0])
        }
    }

    @Test(
        "the newest event of an app is when Stripe made it, applied or not; none for an app without events",
        arguments: RoleImplementation.all)
    func newest(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            #expect(try await ledger.newestStripeEvent(bundleID: Fixture.bundleID) == nil)
            #expect(try await ledger.recordStripeEvent(Self.event("evt_2", at: 20)))
            #expect(try await ledger.recordStripeEvent(Self.event("evt_1", at: 10)))
            #expect(try await ledger.recordStripeEvent(Self.event("evt_9", at: 90, bundleID: Self.otherApp)))
            #expect(try await ledger.newestStripeEvent(bundleID: Fixture.bundleID) == Fixture.at(20))
            #expect(try await ledger.newestStripeEvent(bundleID: Self.otherApp) == Fixture.at(90))
            try await ledger.markStripeEventApplied(bundleID: Fixture.bundleID, eventID: "evt_2", at: Fixture.at(30))
            #expect(try await ledger.newestStripeEvent(bundleID: Fixture.bundleID) == Fixture.at(20))
        }
    }

    /// Recordings each refused for one argument.
    private static let refusedEvents: [(String, StripeEventRecord)] = {
        func changed(_ change: (inout StripeEventRecord) -> Void) -> StripeEventRecord {
            var event = event("evt_1", at: 10)
            change(&event)
            return event
        }
        let long = String(repeating: "x", count: 256)
        return [
            ("empty bundle ID", changed { $0.bundleID = "" }),
            ("empty event ID", changed { $0.eventID = "" }),
            ("event ID over 255", changed { $0.eventID = long }),
            ("empty type", changed { $0.type = "" }),
            ("type over 255", changed { $0.type = long }),
            ("empty object ID", changed { $0.objectID = "" }),
            ("object ID over 255", changed { $0.objectID = long }),
            ("empty payload", changed { $0.payload = "" }),
            ("negative attempts", changed { $0.attempts = -1 }),
            ("failure without an attempt", changed { $0.failure = "why" }),
            (
                "failure on an applied event",
                changed { ($0.attempts, $0.failure, $0.appliedAt) = (1, "why", Fixture.at(11)) }
            ),
            ("failure over 2,000", changed { ($0.attempts, $0.failure) = (1, String(repeating: "f", count: 2_001)) }),
        ]
    }()

    @Test("the arguments are checked before anything is read or written", arguments: RoleImplementation.all)
    func arguments(_ implementation: RoleImplementation) async throws {
        try await implementation.withStripeEvents { ledger in
            for (name, event) in Self.refusedEvents {
                let cause = try await Self.invalidArgument { _ = try await ledger.recordStripeEvent(event) }
                #expect(cause == nil, "\(name)")
            }
            #expect(try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "evt_1") == nil)
            #expect(try await ledger.newestStripeEvent(bundleID: Fixture.bundleID) == nil, "nothing was recorded")

            // At the limits: accepted.
            var longest = Self.event(
                String(repeating: "e", count: 255), at: 10, type: String(repeating: "t", count: 255))
            longest.objectID = String(repeating: "o", count: 255)
            #expect(try await ledger.recordStripeEvent(longest))
            let failure = String(repeating: "f", count: 2_000)
            try await ledger.markStripeEventFailed(
                bundleID: Fixture.bundleID, eventID: longest.eventID, failure: failure)
            #expect(
                try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: longest.eventID)?.failure == failure)

            _ = try await Self.invalidArgument {
                try await ledger.markStripeEventFailed(
                    bundleID: Fixture.bundleID, eventID: longest.eventID, failure: failure + "f")
            }
            for limit in [0, -1] {
                _ = try await Self.invalidArgument {
                    _ = try await ledger.stripeEventsToApply(bundleID: Fixture.bundleID, limit: limit)
                }
            }
            _ = try await Self.invalidArgument { _ = try await ledger.stripeEventsToApply(bundleID: "", limit: 1) }
            _ = try await Self.invalidArgument { _ = try await ledger.newestStripeEvent(bundleID: "") }
            _ = try await Self.invalidArgument {
                _ = try await ledger.stripeEvent(bundleID: Fixture.bundleID, eventID: "")
            }
            _ = try await Self.invalidArgument {
                try await ledger.markStripeEventApplied(bundleID: "", eventID: longest.eventID, at: Fixture.at(20))
            }
            _ = try await Self.invalidArgument {
                try await ledger.markStripeEventApplied(
                    bundleID: Fixture.bundleID, eventID: longest.eventID + "e", at: Fixture.at(20))
            }
            _ = try await Self.invalidArgument {
                try await ledger.markStripeEventFailed(bundleID: Fixture.bundleID, eventID: "", failure: "x")
            }
            let kept = try await ledger.stripeEventsToApply(bundleID: Fixture.bundleID, limit: 10)
            #expect(kept.map(\.attempts) == [1], "a refused mark changes nothing")
        }
    }
}
