import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

/// An engine like ``EngineFixture``'s whose `yearly` subscription is also sold on a monthly plan
/// with a 12-month commitment of 59.88.
private struct CommitmentFixture {
    let clock = SandboxClock.manual(at: EngineFixture.start)
    let engine: SandboxEngine

    init() throws {
        engine = try ExampleSandbox.engine(
            products: EngineFixture.catalog, storefrontIDs: ["USA": "143441"], authority: EngineFixture.authority,
            clock: clock,
            commitmentPlans: { id, _ in
                id == "yearly" ? SandboxCommitmentPlan(commitmentPriceMilliunits: 59_880) : nil
            })
    }

    /// `months` calendar months after the start, in UTC.
    static func month(_ months: Int) -> Date {
        SubscriptionPeriod(value: months, unit: .month).advance(EngineFixture.start)
    }

    func subscribe() async throws -> SandboxTransaction {
        let tester = try await engine.createTester(name: "c@example.com", id: "c")
        return try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "yearly", billingPlanType: .monthly))
                .transaction)
    }
}

@Suite struct CommitmentPlanTests {
    @Test func aMonthlyPlanBillsTwelveMonthsEvenAfterTheCustomerCancels() async throws {
        let fixture = try CommitmentFixture()
        let first = try await fixture.subscribe()
        #expect(first.priceMilliunits == 4_990, "59.88 / 12")
        #expect(first.billingPlanType == .monthly)
        #expect(first.expiresDate == CommitmentFixture.month(1))
        #expect(first.offerType == nil, "no introductory offer on a commitment plan")
        #expect(
            first.commitmentInfo
                == TransactionCommitmentInfo(
                    billingPeriodNumber: 1, commitmentExpiresDate: CommitmentFixture.month(12), commitmentPrice: 59_880,
                    totalBillingPeriods: 12))

        // Cancelling now only stops the commitment from renewing after month 12.
        try await fixture.engine.setAutoRenew(false, originalTransactionID: first.id)
        var info = try await fixture.engine.renewalInfo(originalTransactionID: first.id)
        #expect(info.autoRenewStatus == .on, "month 2 is billed whatever the customer chose")
        #expect(info.renewalPrice == 4_990)
        #expect(info.renewalBillingPlanType == .monthly)
        #expect(info.commitmentInfo?.commitmentAutoRenewStatus == .off)
        #expect(info.commitmentInfo?.commitmentRenewalDate == CommitmentFixture.month(12))

        for month in 2...12 {
            fixture.clock.set(CommitmentFixture.month(month - 1))
            let events = try await fixture.engine.processRenewals()
            #expect(events.map(\.notificationType) == [.didRenew], "month \(month)")
            let renewal = try await fixture.engine.transaction(try #require(events.first).transactionID)
            #expect(renewal.originalID == first.id)
            #expect(renewal.reason == .renewal)
            #expect(renewal.purchaseDate == CommitmentFixture.month(month - 1))
            #expect(renewal.expiresDate == CommitmentFixture.month(month))
            #expect(renewal.priceMilliunits == 4_990)
            #expect(renewal.billingPlanType == .monthly)
            #expect(renewal.commitmentInfo?.billingPeriodNumber == month)
            #expect(renewal.commitmentInfo?.totalBillingPeriods == 12)
            #expect(renewal.commitmentInfo?.commitmentExpiresDate == CommitmentFixture.month(12))
            #expect(renewal.commitmentInfo?.commitmentPrice == 59_880)
        }
        info = try await fixture.engine.renewalInfo(originalTransactionID: first.id)
        #expect(info.autoRenewStatus == .off, "the last month: the customer's choice applies")

        fixture.clock.set(CommitmentFixture.month(12))
        let end = try await fixture.engine.processRenewals()
        #expect(end.map(\.notificationType) == [.expired])
        #expect(end.first?.subtype == .voluntary)
        #expect(try await fixture.engine.status(originalTransactionID: first.id) == .expired)
        #expect(await fixture.engine.snapshot.transactions.elements.count == 12)
    }

    @Test func theRenewalsAreSignedWithTheCommitmentFields() async throws {
        let fixture = try CommitmentFixture()
        let first = try await fixture.subscribe()
        fixture.clock.set(CommitmentFixture.month(3))
        let events = try await fixture.engine.processRenewals()
        #expect(events.count == 3)
        let latest = try await fixture.engine.transaction(try #require(events.last).transactionID)
        let verifier = try fixture.engine.signer.makeVerifier()
        let signed = try await verifier.verifyTransaction(
            try fixture.engine.signer.signTransaction(latest, at: fixture.clock.now()))
        #expect(signed.billingPlanType == .monthly)
        #expect(signed.commitmentInfo?.billingPeriodNumber == 4)
        #expect(signed.commitmentInfo?.totalBillingPeriods == 12)
        #expect(signed.commitmentInfo?.commitmentExpiresDate == CommitmentFixture.month(12))
        #expect(signed.price == 4_990)
        let renewal = try await verifier.verifyRenewalInfo(
            try fixture.engine.signer.signRenewalInfo(
                try await fixture.engine.renewalInfo(originalTransactionID: first.id), at: fixture.clock.now()))
        #expect(renewal.renewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus == .on)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 59_880)
    }

    @Test func aRenewingCommitmentStartsOverAtMonthOne() async throws {
        let fixture = try CommitmentFixture()
        let first = try await fixture.subscribe()
        fixture.clock.set(CommitmentFixture.month(12))
        let events = try await fixture.engine.processRenewals()
        #expect(events.count == 12)
        let thirteenth = try await fixture.engine.transaction(try #require(events.last).transactionID)
        #expect(thirteenth.originalID == first.id)
        #expect(thirteenth.purchaseDate == CommitmentFixture.month(12))
        #expect(thirteenth.commitmentInfo?.billingPeriodNumber == 1)
        #expect(thirteenth.commitmentInfo?.commitmentExpiresDate == CommitmentFixture.month(24))
    }

    @Test func aMonthlyPlanTheProductLacksIsRefused() async throws {
        let fixture = try CommitmentFixture()
        let tester = try await fixture.engine.createTester(name: "r@example.com")
        await #expect(throws: SandboxError(.billingPlanUnavailable)) {
            try await fixture.engine.purchase(
                .init(testerID: tester.id, productID: "monthly", billingPlanType: .monthly))
        }
        await #expect(throws: SandboxError(.billingPlanUnavailable)) {
            try await fixture.engine.checkBillingPlan(
                .init(testerID: tester.id, productID: "points", billingPlanType: .monthly))
        }
        await #expect(throws: SandboxError(.billingPlanUnavailable)) {
            try await fixture.engine.checkBillingPlan(
                .init(testerID: tester.id, productID: "yearly", billingPlanType: BillingPlanType(rawValue: "WEEKLY")))
        }
        let upFront = try #require(
            try await fixture.engine.purchase(
                .init(testerID: tester.id, productID: "yearly", billingPlanType: .billedUpfront)
            ).transaction)
        #expect(upFront.billingPlanType == nil)
        #expect(upFront.commitmentInfo == nil)
        #expect(upFront.priceMilliunits == 49_990)
    }

    @Test(arguments: [
        (119_990, 10, 9_990), (59_880, 10, 4_990), (12_000_000, 1_000, 1_000_000), (11_990_000, 1_000, 999_000),
    ])
    func aMonthIsATwelfthRoundedDown(commitment: Int64, minorUnit: Int64, monthly: Int64) {
        #expect(SandboxCommitmentPlan.monthlyPrice(of: commitment, minorUnitMilliunits: minorUnit) == monthly)
    }
}
