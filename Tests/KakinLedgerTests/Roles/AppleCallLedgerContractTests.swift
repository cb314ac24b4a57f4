import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``AppleCallLedger``, run against every engine and the in-memory implementation.
@Suite("Ledger role: offer signatures and calls owed to Apple")
struct AppleCallLedgerContractTests {
    static func call(_ id: String, bundleID: String = Fixture.bundleID, at seconds: TimeInterval) -> AppleRequestRecord {
        AppleRequestRecord(
            id: id, kind: .consumptionInformation, bundleID: bundleID, transactionID: "t-\(id)", environment: .sandbox,
            detail: "reason", requestedAt: Fixture.at(seconds), nextAttemptAt: Fixture.at(seconds))
    }

    @Test("a holder takes back the calls it holds, and no one else does before the lease ends",
          arguments: RoleImplementation.all)
    func holderTakesBack(_ implementation: RoleImplementation) async throws {
        try await implementation.withAppleCalls { store in
            #expect(try await store.recordAppleRequest(Self.call("a", at: 0)))
            // The claim committed, but its answer never reached the holder.
            let lost = try await store.claimDueAppleRequests(
                holder: "server-1", now: Fixture.at(1), limit: 10, leaseUntil: Fixture.at(121))
            #expect(lost.map(\.id) == ["a"])
            #expect(
                try await store.claimDueAppleRequests(
                    holder: "server-2", now: Fixture.at(2), limit: 10, leaseUntil: Fixture.at(122)
                ).isEmpty, "another holder waits for the lease")
            let back = try await store.claimDueAppleRequests(
                holder: "server-1", now: Fixture.at(3), limit: 10, leaseUntil: Fixture.at(123))
            #expect(back.map(\.id) == ["a"], "its next run takes back what it holds")
            #expect(back.first?.attempts == 2)
            try await store.finishAppleRequest(
                "a", state: .pending, sentBody: nil, error: "unavailable", retryAt: Fixture.at(10), at: Fixture.at(4))
            #expect(
                try await store.claimDueAppleRequests(
                    holder: "server-2", now: Fixture.at(10), limit: 10, leaseUntil: Fixture.at(130)
                ).map(\.id) == ["a"], "a finished call is held by no one")
        }
    }

    @Test("a call is recorded once, taken under a lease, and finished or tried again", arguments: RoleImplementation.all)
    func calls(_ implementation: RoleImplementation) async throws {
        try await implementation.withAppleCalls { store in
            #expect(try await store.recordAppleRequest(Self.call("a", at: 0)))
            #expect(try await !store.recordAppleRequest(Self.call("a", at: 5)), "an ID is recorded once")
            #expect(try await store.recordAppleRequest(Self.call("b", at: 1)))
            #expect(try await store.recordAppleRequest(Self.call("c", bundleID: "com.example.other", at: 2)))
            #expect(try await store.claimDueAppleRequests(now: Fixture.at(0.5), limit: 10, leaseUntil: Fixture.at(60)).map(\.id) == ["a"])

            // Leased: nobody else takes it until the lease ends.
            let claimed = try await store.claimDueAppleRequests(now: Fixture.at(10), limit: 10, leaseUntil: Fixture.at(70))
            #expect(claimed.map(\.id) == ["b", "c"])
            #expect(claimed.allSatisfy { $0.attempts == 1 })
            #expect(try await store.claimDueAppleRequests(now: Fixture.at(30), limit: 10, leaseUntil: Fixture.at(90)).isEmpty)
            let again = try await store.claimDueAppleRequests(now: Fixture.at(60), limit: 10, leaseUntil: Fixture.at(120))
            #expect(again.map(\.id) == ["a"])
            #expect(again.first?.attempts == 2)

            try await store.finishAppleRequest(
                "a", state: .sent, sentBody: "{}", error: nil, retryAt: nil, at: Fixture.at(61))
            try await store.finishAppleRequest(
                "b", state: .pending, sentBody: nil, error: "unavailable", retryAt: Fixture.at(300), at: Fixture.at(62))
            try await store.finishAppleRequest(
                "c", state: .failed, sentBody: nil, error: "refused", retryAt: nil, at: Fixture.at(63))
            #expect(try await store.claimDueAppleRequests(now: Fixture.at(299), limit: 10, leaseUntil: Fixture.at(400)).isEmpty)
            #expect(try await store.claimDueAppleRequests(now: Fixture.at(300), limit: 10, leaseUntil: Fixture.at(400)).map(\.id) == ["b"])

            let listed = try await store.appleRequests(bundleID: nil, limit: 10)
            #expect(listed.map(\.id) == ["c", "b", "a"], "newest first")
            #expect(listed.map(\.state) == [.failed, .pending, .sent])
            #expect(listed[2].sentBody == "{}")
            #expect(listed[2].finishedAt == Fixture.at(61))
            #expect(listed[1].lastError == "unavailable")
            #expect(listed[1].finishedAt == nil)
            #expect(try await store.appleRequests(bundleID: Fixture.bundleID, limit: 1).map(\.id) == ["b"])
        }
    }

    @Test("an offer signature is logged once by its nonce, and listed newest first", arguments: RoleImplementation.all)
    func offerSignatures(_ implementation: RoleImplementation) async throws {
        try await implementation.withAppleCalls { store in
            func signature(_ nonce: String, bundleID: String = Fixture.bundleID, at seconds: TimeInterval) -> OfferSignatureRecord {
                OfferSignatureRecord(
                    nonce: nonce, bundleID: bundleID, appUserID: "alice", productID: "pro", offerID: "intro",
                    kind: .promotional, keyID: "KEY", createdAt: Fixture.at(seconds))
            }
            try await store.recordOfferSignature(signature("n1", at: 0))
            try await store.recordOfferSignature(signature("n2", bundleID: "com.example.other", at: 1))
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.recordOfferSignature(signature("n1", at: 2))
            }
            #expect(try await store.offerSignatures(bundleID: nil, limit: 10) == [signature("n2", bundleID: "com.example.other", at: 1), signature("n1", at: 0)])
            #expect(try await store.offerSignatures(bundleID: Fixture.bundleID, limit: 10).map(\.nonce) == ["n1"])
            #expect(try await store.offerSignatures(bundleID: nil, limit: 1).map(\.nonce) == ["n2"])
        }
    }
}
