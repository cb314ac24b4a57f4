import KakinShopModel
import StoreKit
import SwiftUI

/// The App Store's own sheets, shown when the model asks for them: managing subscriptions (the
/// sheet on iOS; the App Store's subscriptions page on macOS, which has no such sheet) and
/// redeeming an offer code. What the customer does there reaches the app through the store's
/// updates and the server's notifications; the model reads the customer again when they close.
struct AppStoreSheets: ViewModifier {
    @Environment(ShopModel.self) private var model
    @Environment(\.openURL) private var openURL

    func body(content: Content) -> some View {
        let shop = model
        @Bindable var bindable = shop
        return content
            #if os(iOS)
            .manageSubscriptionsSheet(isPresented: $bindable.isManagingSubscriptions)
            #endif
            .offerCodeRedemption(isPresented: $bindable.isRedeemingOfferCode) { result in
                Task { await shop.offerCodeRedemptionFinished(result) }
            }
            .onChange(of: shop.isManagingSubscriptions) { _, showing in
                #if os(macOS)
                // macOS has no such sheet: the App Store's subscriptions page instead.
                if showing {
                    openURL(ShopModel.manageSubscriptionsURL)
                    Task { await shop.manageSubscriptionsClosed() }
                }
                #else
                if !showing { Task { await shop.manageSubscriptionsClosed() } }
                #endif
            }
    }
}
