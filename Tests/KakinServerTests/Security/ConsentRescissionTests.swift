import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinCore
import KakinLedger
import KakinServer
import KakinTestSupport
import KakinWire
import NIOCore
import StoreSandbox
import Testing

/// RESCIND_CONSENT through a real server and its ledger (a SQLite file, or PostgreSQL): the
/// customer's access ends and says why, the customer tokens issued before are refused, the
/// consent-scoped data is erased, a webhook event is written once, and the same notification again
/// changes nothing.
@Suite struct ConsentRescissionTests {
    static var kinds: [StoreKind] { StoreKind.backends.map { $0 == .memory ? .file : $0 } }

    @Test(arguments: kinds)
    func aRescindedConsentEndsAccessOnce(_ kind: StoreKind) async throws {
        try await AttackedServer.run(.recommended, on: kind) { server in
            let customer = "alice"
            let (_, jws) = try await server.buy("removeAd", tester: "kid")
            #expect(try await server.upload(jws, for: customer).status == .ok)
            let linked = try await server.post(
                "/v1/customers/\(customer)/app-transaction",
                AppTransactionSubmission(
                    bundleId: AttackedServer.bundleID, signedAppTransaction: try await server.appTransaction(of: "kid")),
                headers: server.device(customer))
            #expect(linked.status == .ok, "\(String(buffer: linked.body))")
            #expect(try await server.entitlements(of: customer).map(\.identifier) == ["removeAds"])
            let earlierSession = server.device(customer)

            // A parent withdraws consent: the sandbox sends RESCIND_CONSENT.
            server.clock.advance(by: 60)
            _ = try await server.engine.rescindConsent(of: "kid")
            let notification = try #require(
                try await server.engine.queueNotifications().first { $0.notificationType == .rescindConsent })
            let body = ResponseBodyV2(signedPayload: notification.signedPayload)
            func deliver() async throws -> HTTPResponse.Status {
                try await server.post("/v1/notifications/apple", body, headers: [.contentType: "application/json"]).status
            }
            #expect(try await deliver() == .ok)

            // Access has ended, and says why.
            #expect(try await server.entitlements(of: customer).isEmpty)
            let answer = try await server.read(customer, headers: server.backend)
            let decoded = try KakinJSON.decoder().decode(SignedCustomerAnswer.self, from: Data(buffer: answer.body))
            let removeAds = try #require(decoded.customer.entitlements.first)
            #expect(!removeAds.isActive && removeAds.consentRescindedDate == notification.signedDate)

            // The customer's session ends: a token issued before is refused, one issued since is not.
            let refused = try await server.read(customer, headers: earlierSession)
            #expect(refused.status == .unauthorized)
            #expect(refusal(refused).cause == "consentRescinded")
            server.clock.advance(by: 2)
            #expect(try await server.read(customer).status == .ok)

            // The consent-scoped data is erased; the ledger (another handle on it) keeps the rescission.
            let download = try await server.engine.appTransactionID(of: "kid")
            #expect(
                try await server.ledger.appTransactionCustomer(
                    bundleID: AttackedServer.bundleID, appTransactionID: download) == nil)
            let stored = try #require(
                try await server.ledger.consentRescission(bundleID: AttackedServer.bundleID, appUserID: customer))
            #expect(stored.notificationUUID == notification.notificationUUID)
            #expect(stored.erased == [.aliases, .appTransactions])

            // The same notification again changes nothing: one event, the same record.
            #expect(try await deliver() == .ok)
            #expect(
                try await server.ledger.consentRescission(bundleID: AttackedServer.bundleID, appUserID: customer)
                    == stored)
            let events = try await server.ledger.claimDueEvents(
                endpoint: "https://hooks.example.com/consent", now: server.clock.now(), limit: 100,
                leaseUntil: server.clock.now().addingTimeInterval(60))
            let rescinded = events.filter { $0.type == "customer.consent_rescinded" }
            #expect(rescinded.count == 1)
            let payload = try JSONSerialization.jsonObject(with: try #require(rescinded.first).payload) as? [String: Any]
            #expect(payload?["appTransactionId"] as? String == download)
            #expect((payload?["erased"] as? [String: Any])?["appTransactions"] as? Int == 1)
        }
    }
}
