#if os(Linux)
import Foundation
import Kakin
import KakinStoreKit
import StoreKit
import Testing

/// Every error StoreKit declares, thrown by the scripted store where StoreKit throws it, and what
/// the app gets: the ``PaymentError`` case and whether it may try again.
@Suite struct StoreKitErrorMappingTests {
    static let productID = "com.example.kakin.premium.monthly"

    static func script() -> StoreKitTestScript.State {
        var state = StoreKitTestScript.State()
        state.products[productID] = StoreKitTestScript.product(
            id: productID, type: .autoRenewable, displayName: "Premium", description: "Everything, monthly.",
            price: Decimal(string: "4.99")!, displayPrice: "$4.99", currencyCode: "USD",
            locale: Locale(identifier: "en_US"), subscription: ("21000001", 1, .month))
        return state
    }

    /// What buying throws when StoreKit's purchase throws `error`, as the SDK reports it.
    static func purchaseFailure(_ error: any Error & Sendable) async throws -> PaymentError? {
        var script = Self.script()
        script.purchaseErrors[productID] = error
        var failure: PaymentError?
        _ = try await StoreKitTestScript.withScript(script) {
            do {
                let result = try await StoreKitBackend().purchase(productID, quantity: 1, appAccountToken: nil)
                Issue.record("expected \(error) to be thrown, got \(result)")
            } catch {
                failure = PaymentError(error)
            }
        }
        return failure
    }

    static let purchaseErrors: [(Product.PurchaseError, PaymentError)] = [
        (.invalidQuantity, .invalidPayment),
        (.productUnavailable, .productUnavailable),
        (.purchaseNotAllowed, .notAllowed),
        (.ineligibleForOffer, .ineligibleForOffer),
        (.invalidOfferIdentifier, .invalidOffer),
        (.invalidOfferPrice, .invalidOffer),
        (.invalidOfferSignature, .invalidOfferSignature),
        (.missingOfferParameters, .invalidOffer),
        (.paymentMethodBindingConfigurationRequired, .paymentMethodRequired),
    ]

    @Test(arguments: purchaseErrors)
    func eachPurchaseErrorIsAPaymentErrorThatIsNotRetried(
        _ thrown: Product.PurchaseError, _ expected: PaymentError
    ) async throws {
        let failure = try #require(try await Self.purchaseFailure(thrown))
        #expect(failure == expected)
        #expect(!failure.isRetryable, "the App Store refused the purchase as asked")
    }

    @Test func everyPurchaseErrorCaseIsCovered() {
        // A case Apple adds must be added to the table, and to the mapping.
        func covered(_ error: Product.PurchaseError) -> Bool {
            switch error {
            case .invalidQuantity, .productUnavailable, .purchaseNotAllowed, .ineligibleForOffer,
                .invalidOfferIdentifier, .invalidOfferPrice, .invalidOfferSignature, .missingOfferParameters,
                .paymentMethodBindingConfigurationRequired:
                Self.purchaseErrors.contains { $0.0 == error }
            }
        }
        #expect(Self.purchaseErrors.allSatisfy { covered($0.0) })
        #expect(Set(Self.purchaseErrors.map(\.0)).count == 9)
    }

    struct DiskFull: Error {}

    /// Each `StoreKitError` but the cancel: the case and whether the same request may succeed later.
    static let storeKitErrors: [(StoreKitError, PaymentError, retryable: Bool)] = [
        (.unknown, .storeFailure("StoreKit failed without saying why"), true),
        (.networkError(URLError(.notConnectedToInternet)), .network, true),
        (.systemError(DiskFull()), .storeFailure("StoreKit failed: DiskFull()"), true),
        (.notAvailableInStorefront, .productUnavailable, false),
        (.notEntitled, .clientInvalid, false),
        (.unsupported, .invalidPayment, false),
        (
            .invalidPresentationContext,
            .unknown("StoreKit cannot present its sheet from here: give the backend a visible window or scene"), false
        ),
    ]

    @Test(arguments: 0..<storeKitErrors.count)
    func eachStoreKitErrorFromAPurchase(_ index: Int) async throws {
        let (thrown, expected, retryable) = Self.storeKitErrors[index]
        let failure = try #require(try await Self.purchaseFailure(thrown))
        #expect(failure == expected)
        #expect(failure.isRetryable == retryable)
    }

    @Test(arguments: 0..<storeKitErrors.count)
    func eachStoreKitErrorFromLoadingProducts(_ index: Int) async throws {
        let (thrown, expected, retryable) = Self.storeKitErrors[index]
        var script = Self.script()
        script.productsError = thrown
        var failure: PaymentError?
        _ = try await StoreKitTestScript.withScript(script) {
            do { _ = try await StoreKitBackend().products(for: [Self.productID]) } catch {
                failure = PaymentError(error)
            }
        }
        #expect(failure == expected)
        #expect(failure?.isRetryable == retryable)
    }

    @Test(arguments: 0..<storeKitErrors.count)
    func eachStoreKitErrorFromARestore(_ index: Int) async throws {
        let (thrown, expected, retryable) = Self.storeKitErrors[index]
        var script = Self.script()
        script.syncError = thrown
        var failure: PaymentError?
        _ = try await StoreKitTestScript.withScript(script) {
            do { _ = try await StoreKitBackend().restore() } catch { failure = PaymentError(error) }
        }
        #expect(failure == expected)
        #expect(failure?.isRetryable == retryable)
    }

    @Test func aCancelIsAnOutcomeNotAFailure() async throws {
        var script = Self.script()
        script.purchaseErrors[Self.productID] = StoreKitError.userCancelled
        script.syncError = StoreKitError.userCancelled
        var purchase: StorePurchaseResult?
        var restore: PaymentError?
        _ = try await StoreKitTestScript.withScript(script) {
            purchase = try await StoreKitBackend().purchase(Self.productID, quantity: 1, appAccountToken: nil)
            do { _ = try await StoreKitBackend().restore() } catch { restore = PaymentError(error) }
        }
        #expect(purchase == .cancelled, "a purchase the customer cancelled is the cancelled outcome")
        // The payment manager and the store treat a cancelled sign-in as "nothing restored".
        #expect(restore == .cancelled)
        #expect(restore?.isRetryable == false)
    }

    @Test func anErrorStoreKitDoesNotDeclareIsAnUnknownFailure() async throws {
        struct Odd: Error {}
        let failure = try #require(try await Self.purchaseFailure(Odd()))
        #expect(failure == .unknown("StoreKit failed: Odd()"))
        #expect(!failure.isRetryable)
    }
}
#endif
