import Crypto
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// Anonymous IDs are a signed-out device's secret: no webhook event carries one whole.
@Suite("Ledger: anonymous IDs redacted in events")
struct CustomerIDRedactionTests {
    @Test("an anonymous ID becomes the prefix, an ellipsis and 12 hex digits of its SHA-256; identified IDs pass")
    func redaction() throws {
        let anonymous = AnonymousAppUserID.prefix + "0123456789abcdef0123456789abcdef"
        let digest = SHA256.hash(data: Data(anonymous.utf8)).map { String(format: "%02x", $0) }.joined()
        let redacted = CustomerIDRedaction.redacted(anonymous)
        #expect(redacted == "$kakin_anon_…" + digest.prefix(12))
        #expect(!redacted.contains("0123456789abcdef"))
        #expect(CustomerIDRedaction.redacted(redacted) == redacted, "redacting twice changes nothing")
        #expect(CustomerIDRedaction.redacted(AnonymousAppUserID.make()) != redacted, "IDs stay apart")
        // Any ID with the anonymous prefix, even one the server refuses.
        #expect(CustomerIDRedaction.redacted("$kakin_anon_NOT-HEX!").hasPrefix("$kakin_anon_…"))
        #expect(CustomerIDRedaction.redacted("$kakin_anon_NOT-HEX!").count == "$kakin_anon_…".count + 12)
        for identified in ["alice", "", "user:42", "ｋａｉ", "kakin_anon_x"] {
            #expect(CustomerIDRedaction.redacted(identified) == identified)
        }
    }

    @Test("payloads naming customers are written redacted, byte for byte as the encoder writes them")
    func payloadsAreRedacted() throws {
        let anonymous = AnonymousAppUserID.make()
        let alias = AliasEventPayload(
            alias: anonymous, appUserId: "alice", move: CustomerAliasMove(created: true, transactionIDs: ["1"]))
        let transfer = TransferEventPayload(
            originalTransactionId: "1", from: anonymous, to: "bob", transactionIds: ["1"])
        #expect(EventPayloadTests.written(alias) == (try EventPayloadTests.encoded(alias)))
        #expect(EventPayloadTests.written(transfer) == (try EventPayloadTests.encoded(transfer)))
        for json in [alias.json, transfer.json] {
            #expect(!json.contains(anonymous))
            #expect(json.contains(CustomerIDRedaction.redacted(anonymous)))
        }
        #expect(alias.json.contains("\"appUserId\":\"alice\"") && transfer.json.contains("\"to\":\"bob\""))
    }

    @Test(
        "no event of an anonymous customer carries its ID whole: recorded, credited, spent, transferred, aliased",
        arguments: StoreKind.allCases)
    func noEventCarriesAnAnonymousID(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let anonymous = AnonymousAppUserID.make()
            let other = AnonymousAppUserID.make()
            let redacted = CustomerIDRedaction.redacted(anonymous)
            _ = try await store.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            #expect(
                try await store.spend(
                    bundleID: Fixture.bundleID, appUserID: anonymous, currency: "coins", amount: 30,
                    idempotencyKey: "s1", at: Fixture.at(20)) == .spent(balance: 70))
            // A purchase of the other anonymous customer moves to this one, then is refunded.
            let pro = Fixture.transaction("p1", user: other, product: "pro", type: .nonConsumable)
            _ = try await store.record(pro, grants: [.entitlement("pro")])
            let claimed = Fixture.transaction("p1", user: anonymous, product: "pro", type: .nonConsumable)
            let moved = try await store.ingest(
                LedgerIngest(claimed, grants: [.entitlement("pro")], transfersOwnership: true))
            #expect(moved.transferredFrom == other)
            #expect(
                try await store.revoke(
                    transactionID: "c1", at: Fixture.at(40), reason: 0, grants: Fixture.coins, policy: .clampAtZero))
            #expect(
                try await store.alias(
                    bundleID: Fixture.bundleID, anonymousID: anonymous, to: "alice", transfersOwnership: false,
                    at: Fixture.at(50)) != .aliasedToAnotherCustomer("alice"))

            let events = try await store.dueEvents(
                endpoint: "https://hooks.example/a", now: Fixture.at(100), limit: 100)
            #expect(
                Set(events.map(\.type)) == [
                    "transaction.recorded", "balance.credited", "balance.spent", "transaction.transferred",
                    "transaction.revoked", "balance.clawed_back", "customer.aliased",
                ])
            for event in events {
                let payload = String(decoding: event.payload, as: UTF8.self)
                for id in [anonymous, other] {
                    #expect(!payload.contains(id), "\(event.type): \(payload)")
                    #expect(event.appUserID != id, "\(event.type)")
                }
            }
            #expect(
                events.filter { $0.appUserID == redacted }.count >= 5,
                "the anonymous customer's events name it redacted")
            let transferred = try #require(events.first { $0.type == "transaction.transferred" })
            let transfer = try #require(try JSONSerialization.jsonObject(with: transferred.payload) as? [String: Any])
            #expect(transfer["from"] as? String == CustomerIDRedaction.redacted(other))
            #expect(transfer["to"] as? String == redacted)
            let aliased = try #require(events.first { $0.type == "customer.aliased" })
            let alias = try #require(try JSONSerialization.jsonObject(with: aliased.payload) as? [String: Any])
            #expect(alias["alias"] as? String == redacted)
            #expect(alias["appUserId"] as? String == "alice" && aliased.appUserID == "alice")

            // The anonymous customer's deliveries are still found by its ID.
            let deliveries = try await store.webhookDeliveries(
                bundleID: Fixture.bundleID, appUserID: anonymous, limit: 50)
            #expect(deliveries.count == events.filter { $0.appUserID == redacted }.count)
            #expect(deliveries.allSatisfy { $0.appUserID == redacted })
        }
    }
}
