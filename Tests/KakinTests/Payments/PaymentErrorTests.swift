import Foundation
import Synchronization
import Testing

@testable import Kakin

/// What an app gets for each failure: the ``PaymentError`` case for the SDK's errors and the
/// store's codes, whether it may try again, and a cancelled sign-in that restores nothing.
@Suite struct PaymentErrorTests {
    /// The store's codes (`SKError` numbering, which the StoreKit backend gives StoreKit 2's errors).
    static let storeCodes: [(code: Int, error: PaymentError, retryable: Bool)] = [
        (0, .storeFailure("failed"), true),
        (1, .clientInvalid, false),
        (2, .cancelled, false),
        (3, .invalidPayment, false),
        (4, .notAllowed, false),
        (5, .productUnavailable, false),
        (11, .invalidOffer, false),
        (12, .invalidOfferSignature, false),
        (13, .invalidOffer, false),
        (14, .invalidOffer, false),
        (18, .ineligibleForOffer, false),
        (21, .paymentMethodRequired, false),
        (99, .unknown("failed"), false),
    ]

    @Test(arguments: 0..<storeCodes.count)
    func eachStoreCodeIsACaseThatSaysWhetherToRetry(_ index: Int) {
        let (code, expected, retryable) = Self.storeCodes[index]
        let error = PaymentError(KakinError(.storeFailure, "failed", storeKitCode: code))
        #expect(error == expected)
        #expect(error.isRetryable == retryable)
    }

    @Test func theSDKsOwnErrors() {
        #expect(PaymentError(KakinError(.network, "offline")) == .network)
        #expect(PaymentError.network.isRetryable)
        let refused = KakinError(.serverRejected, "forged", serverCode: "verificationFailed")
        #expect(PaymentError(refused) == .serverRejected(refused))
        #expect(!PaymentError(refused).isRetryable, "the server refused for good")
        let busy = KakinError(.serverRejected, "try later", isRetryable: true)
        #expect(PaymentError(busy).isRetryable, "a refusal the server says is temporary")
        #expect(PaymentError(KakinError(.productUnavailable, "gone")) == .productUnavailable)
        #expect(PaymentError(KakinError(.unsupported, "no sheet")) == .unknown("no sheet"))
        #expect(PaymentError.productInfoFailed.isRetryable && PaymentError.restoreFailed.isRetryable)
        struct Odd: Error {}
        #expect(PaymentError(Odd()) == .unknown("Odd()"))
        #expect(!PaymentError.unknown("Odd()").isRetryable)
        #expect(PaymentError(PaymentError.ineligibleForOffer) == .ineligibleForOffer, "already mapped: kept")
    }

    @Test func aCancelledSignInRestoresNothingAndIsNoFailure() async throws {
        let directory = temporaryDirectory("restore-cancel")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SheetStore()
        store.restoreError.withLock { $0 = KakinError(.storeFailure, "the customer cancelled", storeKitCode: 2) }
        let payments = await PaymentManager(
            session: try StoreSession(
                backend: store, server: FakeServer().client, appUserID: "ivy", storageDirectory: directory))
        let delegate = RecordingDelegate()
        await payments.setDelegate(delegate)
        let stream = await payments.statusUpdates()
        let restored = try await payments.restore()
        #expect(restored.isEmpty)

        store.restoreError.withLock { $0 = KakinError(.network, "offline") }
        await #expect(throws: KakinError.self) { _ = try await payments.restore() }
        // The cancel finished the restore; only the real failure is one.
        #expect(await collect(2, from: stream) == [.restoreFinished, .failed(productID: "", error: .restoreFailed)])
        await payments.shutdown()
        #expect(delegate.errors.withLock { $0 } == [.restoreFailed], "a cancel is not reported as a failure")
    }

    @MainActor @Test func theStoreShowsTheAppStoreSheetsThroughItsBackend() async throws {
        let directory = temporaryDirectory("sheets")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SheetStore()
        let server = FakeServer()
        let kakin = try await KakinStore.configure(
            KakinStoreTests.configuration(server, directory: directory, user: "jay"), backend: store)
        try await kakin.showManageSubscriptions(subscriptionGroupID: "21000001")
        try await kakin.showManageSubscriptions()
        #expect(store.sheets.withLock { $0 } == ["manage 21000001", "manage all"])
        let bought = store.base.makeTransaction(FakeStore.removeAd)
        #expect(try await kakin.beginRefundRequest(for: bought) == .requested)
        #expect(store.sheets.withLock { $0 }.last == "refund \(bought.id)")

        store.sheetError.withLock { $0 = KakinError(.notConfigured, "no window scene") }
        await #expect(throws: KakinError(.notConfigured, "")) { try await kakin.showManageSubscriptions() }
        await kakin.shutdown()

        // A store without the sheets says so.
        let sandbox = try await KakinStore.configure(
            KakinStoreTests.configuration(server, directory: directory.appendingPathComponent("plain"), user: "kim"),
            backend: FakeStore())
        await #expect(throws: KakinError(.unsupported, "")) { try await sandbox.showManageSubscriptions() }
        await #expect(throws: KakinError(.unsupported, "")) { _ = try await sandbox.beginRefundRequest(for: bought) }
        await sandbox.shutdown()
    }
}

/// The fake store with the App Store's sheets, and a restore that fails as told.
final class SheetStore: StoreBackend, Sendable {
    let base = FakeStore()
    let restoreError = Mutex<KakinError?>(nil)
    let sheetError = Mutex<KakinError?>(nil)
    let sheets = Mutex<[String]>([])

    var storeIdentifier: String { "sheets" }
    func canMakePayments() async throws -> Bool { try await base.canMakePayments() }
    func products(for identifiers: [String]) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        try await base.products(for: identifiers)
    }
    func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult {
        try await base.purchase(productID, quantity: quantity, appAccountToken: appAccountToken)
    }
    func unfinishedTransactions() async throws -> [StoreTransaction] { try await base.unfinishedTransactions() }
    func finish(_ transaction: StoreTransaction) async throws { try await base.finish(transaction) }
    func restore() async throws -> [StoreTransaction] {
        if let error = restoreError.withLock({ $0 }) { throw error }
        return try await base.restore()
    }
    func currentEntitlements() async throws -> [StoreTransaction] { try await base.currentEntitlements() }
    func transactionUpdates() -> AsyncStream<StoreTransaction> { base.transactionUpdates() }
    func appReceipt() async throws -> String? { nil }

    func showManageSubscriptions(subscriptionGroupID: String?) async throws {
        if let error = sheetError.withLock({ $0 }) { throw error }
        sheets.withLock { $0.append("manage \(subscriptionGroupID ?? "all")") }
    }

    func beginRefundRequest(for transactionID: String) async throws -> RefundRequestOutcome {
        if let error = sheetError.withLock({ $0 }) { throw error }
        sheets.withLock { $0.append("refund \(transactionID)") }
        return .requested
    }
}
