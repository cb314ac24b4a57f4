import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import StoreSandbox
import Testing

/// The control API turns a subscription's automatic renewal off and on, as the customer does in
/// Settings: each change is a DID_CHANGE_RENEWAL_STATUS notification with the new status.
@Suite struct AutoRenewRouteTests {
    typealias JSON = SandboxServiceTests

    @Test func autoRenewalOffAndOnThroughTheControlAPI() async throws {
        let service = try OfferCatalog.service()
        try await Application(router: service.router()).test(.router) { client in
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post, body: JSON.json(["name": "t@example.com", "id": "t"]))
            #expect(created.status == .created)
            let monthly = try #require(
                try await service.engine.purchase(.init(testerID: "t", productID: "com.example.kakin.monthly"))
                    .transaction)
            let off = try await client.execute(
                uri: "/v1/control/subscriptions/\(monthly.originalID)/auto-renew/off", method: .post)
            #expect(off.status == .noContent)
            #expect(
                try await service.engine.renewalInfo(originalTransactionID: monthly.originalID).autoRenewStatus == .off)
            let on = try await client.execute(
                uri: "/v1/control/subscriptions/\(monthly.originalID)/auto-renew/on", method: .post)
            #expect(on.status == .noContent)
            let events = await service.engine.events().filter { $0.notificationType == .didChangeRenewalStatus }
            #expect(events.map(\.subtype) == [.autoRenewDisabled, .autoRenewEnabled])
            #expect(events.map(\.renewalInfo?.autoRenewStatus) == [.off, .on])
            let unknown = try await client.execute(uri: "/v1/control/subscriptions/404/auto-renew/off", method: .post)
            #expect(unknown.status == .notFound)
        }
    }
}
