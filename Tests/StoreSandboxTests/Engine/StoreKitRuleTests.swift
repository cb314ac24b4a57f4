import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct StoreKitRuleTests {
    @Test(arguments: [0, 11, 100, -1])
    func aConsumableQuantityOutsideOneToTenIsRefused(quantity: Int) async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "q@example.com")
        do {
            _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points", quantity: quantity))
            Issue.record("a quantity of \(quantity) was accepted")
        } catch {
            #expect(error.code == .invalidQuantity)
            #expect(error.storeKitCode == .paymentInvalid)
            #expect(error.message.contains("\(quantity)"))
        }
        #expect(await fixture.engine.transactions(of: tester.id).isEmpty)
    }

    @Test func tenConsumablesAreFineButTwoNonConsumablesAreNot() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "q@example.com")
        let ten = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points", quantity: 10))
        #expect(ten.transaction?.quantity == SandboxEngine.maximumQuantity)
        await #expect(throws: SandboxError(.invalidQuantity)) {
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd", quantity: 2))
        }
    }

    @Test func anUnknownProductIsATypedErrorNamingIt() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "u@example.com")
        do {
            _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "com.example.nothing"))
            Issue.record("an unknown product was sold")
        } catch {
            #expect(error.code == .unknownProduct)
            #expect(error.message.contains("com.example.nothing"))
            #expect(error.storeKitCode == .storeProductNotAvailable)
        }
    }

    @Test func theClockNeverRunsBackwards() async throws {
        let fixture = try EngineFixture()
        await #expect(throws: SandboxError(.invalidRequest)) { try await fixture.engine.advanceClock(by: -60) }
        await #expect(throws: SandboxError(.invalidRequest)) { try await fixture.engine.advanceClock(by: .nan) }
        #expect(fixture.clock.now() == EngineFixture.start)
        try await fixture.engine.advanceClock(by: 60)
        #expect(fixture.clock.now() == EngineFixture.start.addingTimeInterval(60))
    }

    @Test func aCrossgradeToTheSameDurationIsImmediateAnotherDurationWaits() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "x@example.com")
        let monthly = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        fixture.days(2)
        let plus = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthlyPlus")).transaction)
        #expect(plus.id != monthly.id, "same level, same duration: at once")
        #expect(plus.originalID == monthly.id)
        #expect(plus.productID == "monthlyPlus")
        #expect(plus.expiresDate == EngineFixture.start.addingTimeInterval(2 * 86_400).advancedByMonths(1))
        #expect(try await fixture.engine.transaction(monthly.id).isUpgraded)
        #expect(await fixture.engine.events().last?.notificationType == .didChangeRenewalPref)
        #expect(await fixture.engine.events().last?.subtype == .upgrade)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).map(\.productID) == ["monthlyPlus"])

        let kept = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "weekly")).transaction)
        #expect(kept.id == plus.id, "same level, another duration: at the next renewal")
        #expect(await fixture.engine.events().last?.subtype == .downgrade)
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: monthly.id).autoRenewProductID == "weekly")
        fixture.days(32)
        try await fixture.engine.processRenewals()
        let renewal = try #require(await fixture.engine.transactions(of: tester.id).last)
        #expect(renewal.productID == "weekly")
        #expect(renewal.reason == .renewal)
    }
}

@Suite struct SimulatedErrorTests {
    @Test func eachAPIFailsWithItsErrorUntilCleared() async throws {
        let fixture = try EngineFixture()
        let engine = fixture.engine
        let tester = try await engine.createTester(name: "e@example.com")
        try await engine.setSimulatedError(.cloudServiceNetworkConnectionFailed, for: .purchase)
        #expect(
            try await engine.purchase(.init(testerID: tester.id, productID: "points")).failure
                == .cloudServiceNetworkConnectionFailed)
        try await engine.setSimulatedError(nil, for: .purchase)
        let bought = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "yearly")).transaction)

        try await engine.setSimulatedError(.unknown, for: .refundRequest)
        await #expect(throws: SandboxError(.simulatedError)) {
            try await engine.requestRefund(bought.id, testerID: tester.id)
        }
        try await engine.setSimulatedError(.clientInvalid, for: .subscriptionStatus)
        do {
            _ = try await engine.subscriptionStatuses(of: tester.id, groupID: "premium")
            Issue.record("the status was answered")
        } catch {
            #expect(error.code == .simulatedError)
            #expect(error.storeKitCode == .clientInvalid)
        }
        try await engine.setSimulatedError(.invalidOfferIdentifier, for: .offerCodeRedeem)
        await #expect(throws: SandboxError(.simulatedError)) {
            try await engine.redeemOfferCode("ANY", testerID: tester.id)
        }
        #expect(await engine.simulatedErrors.count == 3)
        for api in StoreKitTestAPI.allCases { try await engine.setSimulatedError(nil, for: api) }
        #expect(await engine.simulatedErrors.isEmpty)
        try await engine.requestRefund(bought.id, testerID: tester.id)
        let statuses = try await engine.subscriptionStatuses(of: tester.id, groupID: "premium")
        #expect(statuses.map(\.state) == [.active])
        #expect(statuses.first?.transaction.id == bought.id)
        #expect(statuses.first?.renewalInfo.autoRenewProductID == "yearly")
    }

    @Test func simulatedErrorsSurviveARestart() async throws {
        let store = MemoryStateStore()
        let first = try EngineFixture(store: store)
        try await first.engine.setSimulatedError(.paymentNotAllowed, for: .loadProducts)
        let second = try EngineFixture(store: store)
        #expect(await second.engine.simulatedError(for: .loadProducts) == .paymentNotAllowed)
        #expect(await second.engine.simulatedError(for: .purchase) == nil)
    }
}
