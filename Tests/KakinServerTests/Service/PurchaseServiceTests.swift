import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import KakinServer
import KakinLedger
import KakinTestSupport
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

    @Test("an upload answered with a summary stores the digest it looked up with, so its bytes are known next time")
    func uploadsStoreTheirDigestOnce() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await fixture.buy("increasePoints")
        let first = try await fixture.service.submit(
            jws, bundleID: ServerFixture.bundleID, appUserID: "user-1", recent: 0, withJWS: false)
        #expect(first.outcome.isNew)
        #expect(first.summary.balances["points"] == 100)
        let known = try await fixture.store.signedTransaction(digest: SignedDigest(jws))
        #expect(known?.transactionID == transaction.id)
        let again = try await fixture.service.submit(
            jws, bundleID: ServerFixture.bundleID, appUserID: "user-1", recent: 0, withJWS: false)
        #expect(!again.outcome.isNew)
        #expect(again.summary.balances["points"] == 100)
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
            return PurchaseService.example(
                store: fixture.store, root: root, environments: environments, now: { fixture.clock.now() })
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

/// An upload answered with the customer's summary: the same summary a separate read gives,
/// whether the purchase is new, posted again, moved to its new owner, or refused.
@Suite struct SubmitAndSummarizeTests {
    func expectSameAsARead(
        _ fixture: ServerFixture, _ jws: String, user: String, recent: Int = 10, withJWS: Bool = false,
        signedAppTransaction: String? = nil
    ) async throws -> PurchaseService.IngestOutcome {
        let answer = try await fixture.service.submit(
            jws, bundleID: ServerFixture.bundleID, appUserID: user, recent: recent, withJWS: withJWS,
            signedAppTransaction: signedAppTransaction)
        let read = try await fixture.service.customerSummary(
            bundleID: ServerFixture.bundleID, appUserID: user, recent: recent, withJWS: withJWS)
        #expect(answer.summary == read.summary)
        #expect(answer.entitlements == read.entitlements)
        return answer.outcome
    }

    @Test func newThenPostedAgain() async throws {
        let fixture = try await ServerFixture()
        let (_, points) = try await fixture.buy("increasePoints")
        let (_, removeAds) = try await fixture.buy("removeAd")
        #expect(try await expectSameAsARead(fixture, points, user: "user-1").isNew)
        #expect(try await expectSameAsARead(fixture, removeAds, user: "user-1", recent: 1, withJWS: true).isNew)
        #expect(try await !expectSameAsARead(fixture, points, user: "user-1").isNew)
        let summary = try await fixture.service.submit(
            points, bundleID: ServerFixture.bundleID, appUserID: "user-1", recent: 0, withJWS: false)
        #expect(summary.summary.balances["points"] == 100)
        #expect(summary.entitlements.map(\.identifier) == ["removeAds"])
        await #expect(throws: ServerError.self) {
            try await fixture.service.submit(
                points, bundleID: ServerFixture.bundleID, appUserID: "user-2", recent: 0, withJWS: false)
        }
        try await fixture.store.shutdown()
    }

    @Test func movedToTheCustomerWhoRestoredIt() async throws {
        let fixture = try await ServerFixture(transferPolicy: .transferToNewUser)
        let (_, removeAds) = try await fixture.buy("removeAd")
        #expect(try await expectSameAsARead(fixture, removeAds, user: "user-1").isNew)
        // Without proof that user-2's device holds the Apple Account that bought it, it stays.
        await #expect(throws: ServerError(.conflict, "")) {
            try await fixture.service.submit(removeAds, bundleID: ServerFixture.bundleID, appUserID: "user-2")
        }
        let moved = try await expectSameAsARead(
            fixture, removeAds, user: "user-2",
            signedAppTransaction: try await fixture.engine.signedAppTransaction(for: "tester"))
        #expect(moved.transferredFrom == "user-1")
        let answer = try await fixture.service.submit(
            removeAds, bundleID: ServerFixture.bundleID, appUserID: "user-2", recent: 5, withJWS: false)
        #expect(answer.entitlements.map(\.identifier) == ["removeAds"])
        try await fixture.store.shutdown()
    }
}
