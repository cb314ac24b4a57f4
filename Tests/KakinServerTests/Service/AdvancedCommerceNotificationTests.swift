import AppStoreModels
import AppStoreTesting
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinLedger
@testable import KakinServer

/// The Advanced Commerce API's notifications (METADATA_UPDATE, MIGRATION, PRICE_CHANGE): verified,
/// their subscription's transaction and renewal info recorded, each recorded once and acknowledged.
@Suite struct AdvancedCommerceNotificationTests {
    @Test(arguments: [NotificationTypeV2.metadataUpdate, .migration, .priceChange])
    func advancedCommerceNotificationsAreRecordedOnce(_ type: NotificationTypeV2) async throws {
        let fixture = try await ServerFixture()
        let (bought, jws) = try await fixture.buy("premium.monthly")
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "ann")
        let event = try #require(try await fixture.engine.takeEvents().first)
        fixture.clock.advance(by: 3_600)
        var payload = try await fixture.engine.notificationPayload(for: event)
        payload.notificationType = type
        let body = ResponseBodyV2(
            signedPayload: try fixture.engine.signer.signNotification(payload, at: fixture.clock.now()))

        #expect(try await fixture.service.receiveNotification(body) == .processed(type))
        #expect(try await fixture.service.receiveNotification(body) == .duplicate)
        let received = try await fixture.store.receivedNotifications(
            bundleID: ServerFixture.bundleID, appUserID: nil, limit: 10)
        #expect(received.filter { $0.type == type.rawValue }.count == 1)
        #expect(received.first { $0.type == type.rawValue }?.transactionID == bought.id)
        let renewal = try await fixture.store.subscriptionRenewals(
            bundleID: ServerFixture.bundleID, originalTransactionIDs: [bought.originalID])[bought.originalID]
        #expect(renewal?.notificationUUID == payload.notificationUUID, "the renewal info it carries is kept")
    }

    /// A MIGRATION's transaction names the In-App Purchase subscription it replaced; both of the
    /// payload's readers keep it, and the Advanced Commerce details as they came.
    @Test func aMigratedTransactionNamesThePreviousOriginalTransaction() throws {
        let json = Data(
            #"{"transactionId":"2","originalTransactionId":"2","previousOriginalTransactionId":"1","productId":"com.example.generic","type":"Auto-Renewable Subscription"}"#
                .utf8)
        let decoded = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(decoded.previousOriginalTransactionID == "1")
        let flat = json.withUnsafeBytes { JWSTransactionDecodedPayload(flatJSON: $0) }
        #expect(flat == decoded)
        let encoded = try JSONEncoder().encode(decoded)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""previousOriginalTransactionId":"1""#))
        #expect(NotificationTypeV2(rawValue: "MIGRATION") == .migration)
        #expect(NotificationTypeV2.knownValues.contains(.metadataUpdate) && NotificationTypeV2.knownValues.contains(.priceChange))
    }
}
