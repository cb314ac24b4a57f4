#if canImport(StoreKit)
import Kakin
import Foundation
import StoreKit

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension StoreKitBackend {
    /// StoreKit's error as the SDK's: every case of `Product.PurchaseError` and `StoreKitError`
    /// becomes a `KakinError` carrying the matching StoreKit (`SKError`) code, from which
    /// `PaymentError` takes its case and `PaymentError/isRetryable`. Errors of other kinds pass
    /// as `KakinError/Code/storeFailure` with their description and no code.
    static func kakinError(_ error: any Error) -> KakinError {
        switch error {
        case let error as KakinError: error
        case let error as Product.PurchaseError: kakinError(error)
        case let error as StoreKitError: kakinError(error)
        case let error as Transaction.RefundRequestError: kakinError(error)
        default: KakinError(.storeFailure, "StoreKit failed: \(error)")
        }
    }

    /// `Product.PurchaseError`: the App Store refused this purchase as asked. None is retryable.
    static func kakinError(_ error: Product.PurchaseError) -> KakinError {
        switch error {
        case .invalidQuantity:
            KakinError(.storeFailure, "the App Store does not take this quantity", storeKitCode: 3)
        case .productUnavailable:
            KakinError(.productUnavailable, "the product is not available", storeKitCode: 5)
        case .purchaseNotAllowed:
            KakinError(.storeFailure, "this account may not make purchases", storeKitCode: 4)
        case .ineligibleForOffer:
            KakinError(.storeFailure, "the customer may not have this offer", storeKitCode: 18)
        case .invalidOfferIdentifier:
            KakinError(.storeFailure, "the App Store does not know this offer", storeKitCode: 11)
        case .invalidOfferPrice:
            KakinError(.storeFailure, "the offer's price is not valid", storeKitCode: 14)
        case .invalidOfferSignature:
            KakinError(.storeFailure, "the App Store refused the offer's signature", storeKitCode: 12)
        case .missingOfferParameters:
            KakinError(.storeFailure, "the offer's parameters are missing", storeKitCode: 13)
        default: newerPurchaseError(error)
        }
    }

    /// The cases newer than the package's oldest systems. `paymentMethodBindingConfigurationRequired`
    /// came with the iOS 26.5 SDK (Xcode 26.5, the oldest the package builds with) and is thrown from
    /// iOS 26.5; later SDKs may add more.
    static func newerPurchaseError(_ error: Product.PurchaseError) -> KakinError {
        if #available(iOS 26.5, macOS 26.5, tvOS 26.5, watchOS 26.5, visionOS 26.5, *),
            case .paymentMethodBindingConfigurationRequired = error
        {
            return KakinError(
                .storeFailure, "the customer must add a payment method to their Apple Account first",
                storeKitCode: 21)
        }
        return KakinError(.storeFailure, "the App Store refused the purchase: \(error)")
    }

    /// `StoreKitError`: StoreKit's own failures. The network and StoreKit's unexplained or system
    /// errors are retryable; a cancel is StoreKit code 2, which the callers treat as an outcome.
    static func kakinError(_ error: StoreKitError) -> KakinError {
        switch error {
        case .unknown:
            return KakinError(.storeFailure, "StoreKit failed without saying why", storeKitCode: 0, isRetryable: true)
        case .userCancelled:
            return KakinError(.storeFailure, "the customer cancelled", storeKitCode: 2)
        case .networkError(let error):
            return KakinError(.network, "the App Store could not be reached (URL error \(error.code.rawValue))")
        case .systemError(let error):
            return KakinError(.storeFailure, "StoreKit failed: \(error)", storeKitCode: 0, isRetryable: true)
        case .notAvailableInStorefront:
            return KakinError(.productUnavailable, "not available in this account's storefront", storeKitCode: 5)
        case .notEntitled:
            return KakinError(.storeFailure, "the app lacks the entitlement StoreKit needs for this", storeKitCode: 1)
        default:
            // `unsupported` is newer (iOS 18.4) than the package's oldest systems; later SDKs add cases.
            if #available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *), case .unsupported = error {
                return KakinError(
                    .storeFailure, "StoreKit does not support this product for this operation", storeKitCode: 3)
            }
            #if compiler(>=6.4) || os(Linux)
                // New in the iOS 27 SDK: a sheet asked of a window that is not visible, or a view
                // controller not in a window. The app must present from somewhere else.
                if #available(iOS 27.0, macOS 27.0, tvOS 27.0, watchOS 27.0, visionOS 27.0, *),
                    case .invalidPresentationContext = error
                {
                    return KakinError(
                        .notConfigured,
                        "StoreKit cannot present its sheet from here: give the backend a visible window or scene")
                }
            #endif
            return KakinError(.storeFailure, "StoreKit failed: \(error)")
        }
    }

    /// `Transaction.RefundRequestError.failed` (a duplicate request is an outcome, not an error).
    static func kakinError(_ error: Transaction.RefundRequestError) -> KakinError {
        switch error {
        case .failed: KakinError(.storeFailure, "the refund request failed", storeKitCode: 0, isRetryable: true)
        default: KakinError(.storeFailure, "the refund request failed: \(error)")
        }
    }
}
#endif
