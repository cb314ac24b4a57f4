import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import StoreSandbox
import Testing

/// `PUT /v1/control/settings` changes only the keys it is given.
@Suite struct SettingsUpdateTests {
    static var fullSettings: [String: Any] {[
        "askToBuy": true, "gracePeriodDays": 6, "failPurchasesWith": 2,
        "notificationURL": "http://127.0.0.1:8080/v1/notifications/apple",
    ]}

    func put(_ body: String, client: some TestClientProtocol) async throws -> TestResponse {
        try await client.execute(uri: "/v1/control/settings", method: .put, body: ByteBuffer(string: body))
    }

    @Test func absentKeysKeepTheirValue() async throws {
        let service = try SandboxServiceTests().makeService()
        try await Application(router: service.router()).test(.router) { client in
            let full = try await client.execute(
                uri: "/v1/control/settings", method: .put, body: SandboxServiceTests.json(Self.fullSettings))
            #expect(full.status == .ok)

            let partial = try await put(#"{"gracePeriodDays":16}"#, client: client)
            #expect(partial.status == .ok)
            let answered = SandboxServiceTests.object(partial.body)
            #expect(answered["gracePeriodDays"] as? Int == 16)
            #expect(answered["askToBuy"] as? Bool == true)
            #expect(answered["failPurchasesWith"] as? Int == 2)
            #expect(answered["notificationURL"] as? String == "http://127.0.0.1:8080/v1/notifications/apple")

            let stored = await service.engine.settings
            #expect(
                stored
                    == SandboxSettings(
                        failPurchasesWith: .paymentCancelled, askToBuy: true, gracePeriodDays: 16,
                        notificationURL: URL(string: "http://127.0.0.1:8080/v1/notifications/apple")))
        }
    }

    @Test func theReadmeExampleKeepsTheNotificationURL() async throws {
        let service = try SandboxServiceTests().makeService()
        let url = try #require(URL(string: "http://127.0.0.1:8080/v1/notifications/apple"))
        try await service.engine.updateSettings(SandboxSettings(notificationURL: url))
        try await Application(router: service.router()).test(.router) { client in
            let response = try await put(#"{"askToBuy":false,"gracePeriodDays":16,"failPurchasesWith":2}"#, client: client)
            #expect(response.status == .ok)
        }
        #expect(await service.engine.settings.notificationURL == url)
        #expect(await service.engine.settings.failPurchasesWith == .paymentCancelled)
    }

    @Test func explicitNullClearsAnOptionalSetting() async throws {
        let service = try SandboxServiceTests().makeService()
        try await Application(router: service.router()).test(.router) { client in
            _ = try await client.execute(
                uri: "/v1/control/settings", method: .put, body: SandboxServiceTests.json(Self.fullSettings))
            let cleared = try await put(#"{"failPurchasesWith":null,"notificationURL":null}"#, client: client)
            #expect(cleared.status == .ok)
        }
        #expect(await service.engine.settings == SandboxSettings(askToBuy: true, gracePeriodDays: 6))
    }

    @Test(arguments: [
        #"{"askToBuy":null}"#, #"{"gracePeriodDays":null}"#, #"{"gracePeriodDays":-1}"#,
        #"{"notificationUrl":"http://example.com"}"#, #"{"askToBuy":"yes"}"#, #"[]"#,
    ])
    func badUpdatesAreRefusedAndChangeNothing(body: String) async throws {
        let service = try SandboxServiceTests().makeService()
        let before = await service.engine.settings
        try await Application(router: service.router()).test(.router) { client in
            let response = try await put(body, client: client)
            #expect(response.status == .badRequest)
            let error = SandboxServiceTests.object(response.body)["error"] as? [String: Any]
            #expect(error?["code"] as? String == "invalidRequest")
        }
        #expect(await service.engine.settings == before)
    }

    @Test func anEmptyUpdateChangesNothing() async throws {
        let update = try JSONDecoder().decode(SandboxSettingsUpdate.self, from: Data("{}".utf8))
        #expect(update == SandboxSettingsUpdate())
        let settings = SandboxSettings(failPurchasesWith: .paymentInvalid, askToBuy: true, gracePeriodDays: 3)
        #expect(update.applied(to: settings) == settings)
    }

    @Test func theEngineRefusesANegativeGracePeriod() async throws {
        let service = try SandboxServiceTests().makeService()
        await #expect(throws: SandboxError(.invalidRequest)) {
            try await service.engine.updateSettings(SandboxSettingsUpdate(gracePeriodDays: -2))
        }
    }
}
