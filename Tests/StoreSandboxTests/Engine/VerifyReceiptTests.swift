import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import StoreSandbox
import Testing

@Suite struct VerifyReceiptTests {
    func receipt(_ fixture: EngineFixture, _ products: [String]) async throws -> (SandboxTester, String) {
        let tester = try await fixture.engine.createTester(name: "r@example.com")
        for product in products {
            _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: product))
        }
        let bytes = try await fixture.engine.appReceipt(for: tester.id, deviceIdentifier: UUID())
        return (tester, Data(bytes).base64EncodedString())
    }

    @Test func productionAnswers21007AndTheSandboxAnswersTheReceipt() async throws {
        let fixture = try EngineFixture()
        let (_, base64) = try await receipt(fixture, ["removeAd", "monthly"])
        let request = VerifyReceiptRequest(receiptData: base64, password: "secret")
        let production = await fixture.engine.verifyReceipt(request, endpoint: .production, sharedSecret: "secret")
        #expect(production.status == .sandboxReceiptSentToProduction)
        #expect(production.status?.shouldRetryInOtherEnvironment == true)
        let sandbox = await fixture.engine.verifyReceipt(request, endpoint: .sandbox, sharedSecret: "secret")
        #expect(sandbox.status == .valid)
        #expect(sandbox.environment == .sandbox)
        #expect(sandbox.receipt?.bundleID == "com.example.kakin")
        #expect(sandbox.receipt?.inApp?.map(\.productID) == ["removeAd", "monthly"])
        #expect(sandbox.latestReceiptInfo?.first?.productID == "monthly")
        #expect(sandbox.latestReceiptInfo?.first?.isTrialPeriod == "true")
        #expect(sandbox.pendingRenewalInfo?.first?.autoRenewStatus == "1")
        #expect(sandbox.receipt?.inApp?.first?.purchaseDateMS == "\(EngineFixture.start.epochMilliseconds)")
    }

    @Test func statusCodes() async throws {
        let fixture = try EngineFixture()
        let (tester, base64) = try await receipt(fixture, ["monthly"])
        #expect(
            await fixture.engine.verifyReceipt(.init(receiptData: "not base64!"), endpoint: .sandbox).status
                == .malformedReceiptData)
        #expect(await fixture.engine.verifyReceipt(.init(), endpoint: .sandbox).status == .malformedReceiptData)
        #expect(
            await fixture.engine.verifyReceipt(
                .init(receiptData: base64, password: "wrong"), endpoint: .sandbox, sharedSecret: "secret"
            )
            .status == .sharedSecretMismatch)
        // A receipt signed by another CA cannot be authenticated.
        let foreign = SandboxSigner(
            authority: try SandboxCertificateAuthority.generate(now: EngineFixture.start),
            bundleID: "com.example.kakin",
            appAppleID: 1)
        let forged = try foreign.appReceipt(
            transactions: [], originalPurchaseDate: EngineFixture.start, deviceIdentifier: UUID(),
            opaqueValue: Data(count: 16),
            at: EngineFixture.start)
        #expect(
            await fixture.engine.verifyReceipt(
                .init(receiptData: Data(forged).base64EncodedString()), endpoint: .sandbox
            ).status
                == .receiptNotAuthenticated)
        // After the tester's history is cleared, the receipt's purchases belong to nobody: 21010.
        try await fixture.engine.clearPurchaseHistory(of: tester.id)
        #expect(
            await fixture.engine.verifyReceipt(.init(receiptData: base64), endpoint: .sandbox).status
                == .accountNotFound)
    }

    @Test func excludeOldTransactionsKeepsTheLatestRenewal() async throws {
        let fixture = try EngineFixture()
        let (tester, _) = try await receipt(fixture, ["monthly"])
        fixture.days(40)
        try await fixture.engine.processRenewals()
        let base64 = Data(try await fixture.engine.appReceipt(for: tester.id, deviceIdentifier: UUID()))
            .base64EncodedString()
        let all = await fixture.engine.verifyReceipt(.init(receiptData: base64), endpoint: .sandbox)
        #expect(all.latestReceiptInfo?.count == 3)
        let latest = await fixture.engine.verifyReceipt(
            .init(receiptData: base64, excludeOldTransactions: true), endpoint: .sandbox)
        #expect(latest.latestReceiptInfo?.count == 1)
    }
}
