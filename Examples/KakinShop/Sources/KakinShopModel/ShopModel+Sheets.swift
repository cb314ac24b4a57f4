public import Foundation
import Kakin

/// The App Store's own sheets: managing subscriptions and redeeming offer codes. The model holds
/// the intent (a flag the view binds its sheet to) and what happens when the sheet closes; the
/// sheets themselves are StoreKit's SwiftUI modifiers, shown by the views on Apple platforms.
extension ShopModel {
    /// Where a customer manages their subscriptions on a platform without the in-app sheet (macOS),
    /// or when the sheet cannot be shown.
    public static let manageSubscriptionsURL = URL(string: "https://apps.apple.com/account/subscriptions")!

    /// Asks for the App Store's manage-subscriptions sheet, where the customer changes their plan,
    /// their payment method (the way out of a billing problem) or cancels.
    public func manageSubscriptions() {
        isManagingSubscriptions = true
    }

    /// The manage-subscriptions sheet closed: reads the customer again. What the customer changed
    /// reaches the server through the App Store's notifications, so it may show a little later
    /// (the next ``refresh()``).
    public func manageSubscriptionsClosed() async {
        isManagingSubscriptions = false
        await refresh()
    }

    /// Asks for the App Store's offer code redemption sheet.
    public func redeemOfferCode() {
        isRedeemingOfferCode = true
    }

    /// The offer code sheet closed with `result`. A redeemed code becomes a transaction that
    /// arrives through the store's updates, which the SDK delivers to the server by itself (the
    /// store then reads the customer again); this reads the customer and the offers once more in
    /// case that already happened.
    public func offerCodeRedemptionFinished(_ result: Result<Void, any Error>) async {
        isRedeemingOfferCode = false
        switch result {
        case .success:
            report(.offerCodeRedeemed)
            await refresh()
            await reloadProductsQuietly()
        case .failure(let error):
            report(.failed(PaymentError(error)))
        }
    }
}
