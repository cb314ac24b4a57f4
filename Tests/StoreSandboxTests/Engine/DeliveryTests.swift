import AppStoreModels
import AppStoreSecurity
import Foundation
import Synchronization
import StoreSandbox
import Testing

/// A server that answers with the results it is given, in order, and keeps what it received.
actor ScriptedTransport: NotificationTransport {
    var results: [SendAttemptResult]
    var received: [Data] = []

    init(_ results: [SendAttemptResult]) {
        self.results = results
    }

    func post(_ body: Data, to url: URL) async -> SendAttemptResult {
        received.append(body)
        return results.isEmpty ? .success : results.removeFirst()
    }
}

/// A state store that counts how often the engine writes.
final class CountingStateStore: SandboxStateStore {
    let inner = MemoryStateStore()
    let saves = Mutex(0)

    func load() throws -> SandboxState? { try inner.load() }
    func save(_ state: SandboxState) throws {
        saves.withLock { $0 += 1 }
        try inner.save(state)
    }
}

@Suite struct DeliveryTests {
    let url = URL(string: "http://127.0.0.1:9/apple")!

    @Test func anIdleSandboxWritesNothing() async throws {
        let store = CountingStateStore()
        let fixture = try EngineFixture(store: store)
        var settings = SandboxSettings()
        settings.notificationURL = url
        try await fixture.engine.updateSettings(settings)
        let tester = try await fixture.engine.createTester(name: "idle@example.com")
        _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly"))
        let transport = ScriptedTransport([])
        await fixture.engine.runDueWork(using: transport)
        #expect(await transport.received.count == 1, "the purchase's notification went out")
        let afterWork = store.saves.withLock { $0 }
        for _ in 0..<10 {
            fixture.clock.advance(by: 1)
            await fixture.engine.runDueWork(using: transport)
        }
        #expect(store.saves.withLock { $0 } == afterWork, "ten idle rounds wrote nothing")
        // A renewal is a change: it is written.
        fixture.days(40)
        await fixture.engine.runDueWork(using: transport)
        #expect(store.saves.withLock { $0 } > afterWork)
    }

    @Test func retriesOnApplesScheduleOnTheSandboxClock() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "d@example.com")
        _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd"))
        let transport = ScriptedTransport([.unsuccessfulHTTPResponseCode, .noResponse, .success])

        #expect(try await fixture.engine.deliverDueNotifications(to: url, using: transport).count == 1)
        fixture.clock.advance(by: 3599)
        #expect(
            try await fixture.engine.deliverDueNotifications(to: url, using: transport).isEmpty, "not due before +1 h")
        fixture.clock.advance(by: 1)
        #expect(try await fixture.engine.deliverDueNotifications(to: url, using: transport).count == 1)
        fixture.clock.advance(by: 12 * 3600)
        #expect(try await fixture.engine.deliverDueNotifications(to: url, using: transport).count == 1)
        fixture.clock.advance(by: 100 * 3600)
        #expect(
            try await fixture.engine.deliverDueNotifications(to: url, using: transport).isEmpty,
            "delivered: no more attempts")

        let record = try #require(await fixture.engine.notificationHistory().first)
        #expect(record.attempts.map(\.sendAttemptResult) == [.unsuccessfulHTTPResponseCode, .noResponse, .success])
        #expect(record.nextAttemptDate == nil)
        let bodies = await transport.received
        #expect(bodies.count == 3)
        let body = try JSONDecoder().decode(ResponseBodyV2.self, from: bodies[0])
        let notification = try await fixture.engine.signer.makeVerifier().verifyNotification(try #require(body.signedPayload))
        #expect(notification.notificationType == .oneTimeCharge)
        #expect(notification.notificationUUID == record.notificationUUID)
        #expect(Set(bodies).count == 1, "every retry sends the same notification")
    }

    @Test func givesUpAfterFiveRetries() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "d@example.com")
        _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points"))
        let transport = ScriptedTransport(Array(repeating: .timedOut, count: 10))
        for _ in 0..<10 {
            try await fixture.engine.deliverDueNotifications(to: url, using: transport)
            fixture.clock.advance(by: 72 * 3600)
        }
        let record = try #require(await fixture.engine.notificationHistory().first)
        #expect(record.attempts.count == 6)
        #expect(record.nextAttemptDate == nil)
    }

    @Test func withoutAURLNotificationsWait() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "d@example.com")
        _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points"))
        #expect(try await fixture.engine.deliverDueNotifications(to: nil, using: ScriptedTransport([])).isEmpty)
        #expect(await fixture.engine.events().count == 1)
    }
}
