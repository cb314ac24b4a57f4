import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinServer
import StoreSandbox
import Testing

@Suite struct PurchaseServiceTests {
    @Test func aSignedTransactionBecomesAnEntitlement() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await fixture.buy("removeAd")
        let customer = try await fixture.service.submitTransaction(
            jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.entitlements.map(\.identifier) == ["removeAds"])
        #expect(customer.entitlements.first?.isActive == true)
        #expect(customer.transactions.map(\.transactionID) == [transaction.id])
        try await fixture.store.shutdown()
    }

    @Test func theSameTransactionPostedConcurrentlyGrantsOnce() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("increasePoints")
        let service = fixture.service
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
                }
            }
            try await group.waitForAll()
        }
        let customer = try await service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.balances["points"] == 100)
        #expect(customer.ledger.count == 1)
        try await fixture.store.shutdown()
    }

    @Test func signedBytesAlreadyInTheLedgerAreAnsweredFromTheirDigest() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await fixture.buy("increasePoints")
        #expect(try await fixture.store.signedTransaction(digest: SignedDigest(jws)) == nil)
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        let known = try await fixture.store.signedTransaction(digest: SignedDigest(jws))
        #expect(
            known
                == KnownSignedTransaction(
                    transactionID: transaction.id, bundleID: ServerFixture.bundleID, environment: .sandbox,
                    appUserID: "user-1"))
        #expect(try await fixture.store.signedTransaction(digest: SignedDigest(jws + "x")) == nil)

        // A service that trusts another root cannot verify these bytes, so only the digest can
        // answer: the same customer posting them again is a duplicate, anyone else is refused.
        func service(environments: Set<AppStoreEnvironment>) throws -> PurchaseService {
            let root = try SandboxCertificateAuthority.generate(now: ServerFixture.start).root
            return PurchaseService(
                store: fixture.store,
                apps: [
                    AppConfiguration(
                        bundleID: ServerFixture.bundleID, appAppleID: 6_450_000_001, environments: environments,
                        sandboxRoots: [root], publicKey: "pk_test", secretKey: "sk_test")
                ], now: { fixture.clock.now() })
        }
        let otherRoot = try service(environments: [.sandbox])
        let again = try await otherRoot.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(!again.isNew)
        await #expect(throws: ServerError(.verificationFailed, "")) {
            try await otherRoot.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "user-2")
        }
        // An environment the app no longer accepts is refused even for known bytes.
        await #expect(throws: ServerError(.verificationFailed, "")) {
            try await service(environments: [.production]).submit(
                jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        }
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.balances["points"] == 100)
        #expect(customer.ledger.count == 1)
        try await fixture.store.shutdown()
    }

    @Test func tamperedOrForeignTransactionsChangeNothing() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("increasePoints")
        var parts = jws.split(separator: ".").map(String.init)
        parts[1] = String(parts[1].reversed())
        await #expect(throws: ServerError(.verificationFailed, "")) {
            try await fixture.service.submitTransaction(
                parts.joined(separator: "."), bundleID: ServerFixture.bundleID, appUserID: "u")
        }
        let foreign = SandboxSigner(
            authority: try SandboxCertificateAuthority.generate(now: ServerFixture.start),
            bundleID: ServerFixture.bundleID,
            appAppleID: 1)
        let (transaction, _) = try await fixture.buy("increasePoints")
        let forged = try foreign.signTransaction(transaction, at: ServerFixture.start)
        await #expect(throws: ServerError(.verificationFailed, "")) {
            try await fixture.service.submitTransaction(forged, bundleID: ServerFixture.bundleID, appUserID: "u")
        }
        await #expect(throws: ServerError(.unknownApp, "")) {
            try await fixture.service.submitTransaction(jws, bundleID: "com.other", appUserID: "u")
        }
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "u")
        #expect(customer.transactions.isEmpty)
        #expect(customer.balances.isEmpty)
        try await fixture.store.shutdown()
    }

    @Test func aRefundNotificationBeforeTheUploadGrantsNothing() async throws {
        let fixture = try await ServerFixture()
        let (transaction, _) = try await fixture.buy("increasePoints")
        try await fixture.engine.refund(transaction.id)
        for event in await fixture.engine.events() {
            _ = try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: event))
        }
        let refunded = try fixture.engine.signer.signTransaction(
            try await fixture.engine.transaction(transaction.id), at: fixture.clock.now())
        let original = try fixture.engine.signer.signTransaction(
            {
                var copy = transaction; copy.revocationDate = nil; return copy
            }(), at: fixture.clock.now())
        _ = try await fixture.service.submitTransaction(original, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        _ = try await fixture.service.submitTransaction(refunded, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.balances["points"] == nil, "a purchase refunded before its upload never grants")
        #expect(customer.ledger.isEmpty)
        #expect(customer.transactions.first?.revocationDate != nil)
        try await fixture.store.shutdown()
    }

    @Test func notificationsAreRecordedOnceAndRefundsClawBack() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await fixture.buy("increasePoints")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        try await fixture.engine.refund(transaction.id)
        let refund = try #require(await fixture.engine.events().last)
        let body = try await fixture.engine.signedNotification(for: refund)
        #expect(try await fixture.service.receiveNotification(body) == .processed(.refund))
        #expect(try await fixture.service.receiveNotification(body) == .duplicate)
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.balances["points"] == 0)
        #expect(customer.ledger.map(\.kind) == [.credit, .clawback])
        try await fixture.store.shutdown()
    }

    @Test func receiptsFallBackToTheSandboxOn21007() async throws {
        let fixture = try await ServerFixture()
        _ = try await fixture.buy("unlock")
        let receipt = Data(try await fixture.engine.appReceipt(for: "tester", deviceIdentifier: UUID()))
            .base64EncodedString()
        let customer = try await fixture.service.submitReceipt(
            receipt, bundleID: ServerFixture.bundleID, appUserID: "user-9")
        #expect(customer.entitlements.map(\.identifier) == ["unlock"])
        await #expect(throws: ServerError(.invalidRequest, "")) {
            try await fixture.service.submitReceipt("", bundleID: ServerFixture.bundleID, appUserID: "user-9")
        }
        do {
            _ = try await fixture.service.submitReceipt("AAAA", bundleID: ServerFixture.bundleID, appUserID: "user-9")
            Issue.record("a malformed receipt was accepted")
        } catch let error as ServerError {
            #expect(error.code == .receiptRejected)
            #expect(error.appleStatus == 21002)
        }
        try await fixture.store.shutdown()
    }

    @Test func spendingIsAtomicAndIdempotent() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("increasePoints")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        let service = fixture.service
        #expect(
            try await service.spend(
                bundleID: ServerFixture.bundleID, appUserID: "user-1", currency: "points", amount: 30,
                idempotencyKey: "a") == .spent(balance: 70))
        #expect(
            try await service.spend(
                bundleID: ServerFixture.bundleID, appUserID: "user-1", currency: "points", amount: 30,
                idempotencyKey: "a") == .alreadySpent(balance: 70))
        #expect(
            try await service.spend(
                bundleID: ServerFixture.bundleID, appUserID: "user-1", currency: "points", amount: 71,
                idempotencyKey: "b") == .insufficientBalance(balance: 70))
        try await fixture.store.shutdown()
    }

    @Test func aRestartWithTheSameFileLosesNothing() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try await ServerFixture(path: path)
        let (_, jws) = try await first.buy("removeAd")
        _ = try await first.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        try await first.store.shutdown()
        let second = try await ServerFixture(path: path)
        let customer = try await second.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.entitlements.map(\.identifier) == ["removeAds"])
        try await second.store.shutdown()
    }
}

extension PurchaseServiceTests {
    @Test func eachAppHasItsOwnTrustAndKeys() async throws {
        let fixture = try await ServerFixture()
        let other = AppConfiguration(
            bundleID: "com.example.other", appAppleID: 42, environments: [.production], publicKey: "pk_other",
            secretKey: "sk_other")
        let service = PurchaseService(
            store: fixture.store, apps: [try fixture.service.app(ServerFixture.bundleID), other],
            grants: fixture.service.grants,
            verifyReceiptClient: EngineVerifyReceiptClient(engine: fixture.engine), now: { ServerFixture.start })
        let (_, jws) = try await fixture.buy("removeAd")
        // A sandbox transaction of one app is refused for an app that accepts only Production
        // (and trusts only Apple's root), and a transaction is never accepted for another bundle.
        await #expect(throws: ServerError(.verificationFailed, "")) {
            try await service.submitTransaction(jws, bundleID: "com.example.other", appUserID: "u")
        }
        _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "u")
        #expect(try await service.customer(bundleID: "com.example.other", appUserID: "u").transactions.isEmpty)
        #expect(try await service.customer(bundleID: ServerFixture.bundleID, appUserID: "u").transactions.count == 1)
        try await fixture.store.shutdown()
    }
}
