public import AppStoreModels
import Foundation

/// The StoreKit APIs whose failure a test can simulate, as Xcode's
/// `SKTestSession.setSimulatedError(_:forAPI:)` offers.
public enum StoreKitTestAPI: String, Codable, CaseIterable, Hashable, Sendable {
    /// `Product.products(for:)` / `SKProductsRequest`: the device's products request.
    case loadProducts
    /// `Product.purchase()` / `SKPaymentQueue.add`: a payment (it ends as failed with the code).
    case purchase
    /// `AppStore.sync()` / `restoreCompletedTransactions()`: the device's restore.
    case appStoreSync
    /// `AppTransaction.shared`: the device's app transaction.
    case appTransaction
    /// `Product.SubscriptionInfo.status`: the device's subscription status.
    case subscriptionStatus
    /// `Transaction.beginRefundRequest`: the device's refund request.
    case refundRequest
    /// The offer code redeem sheet: the device's offer code redemption.
    case offerCodeRedeem
}

extension SandboxEngine {
    /// Makes `api` fail with the StoreKit error `code` until cleared with `nil`, as
    /// `SKTestSession.setSimulatedError(_:forAPI:)` does. The device API's matching endpoint then
    /// answers with that error; a purchase ends as failed with it.
    public func setSimulatedError(_ code: StoreKitErrorCode?, for api: StoreKitTestAPI) throws(SandboxError) {
        state.simulatedErrors[api.rawValue] = code
        try save()
    }

    /// The error `api` is made to fail with, if any.
    public func simulatedError(for api: StoreKitTestAPI) -> StoreKitErrorCode? {
        state.simulatedErrors[api.rawValue]
    }

    /// Every simulated error, by API.
    public var simulatedErrors: [StoreKitTestAPI: StoreKitErrorCode] {
        var result: [StoreKitTestAPI: StoreKitErrorCode] = [:]
        for api in StoreKitTestAPI.allCases { result[api] = simulatedError(for: api) }
        return result
    }

    /// Throws ``SandboxError/Code/simulatedError`` carrying the StoreKit code when `api` is made to fail.
    public func checkSimulatedError(_ api: StoreKitTestAPI) throws(SandboxError) {
        guard let code = simulatedError(for: api) else { return }
        throw SandboxError(
            .simulatedError, "\(api.rawValue) fails with the simulated StoreKit error \(code.rawValue)",
            storeKitCode: code)
    }
}
