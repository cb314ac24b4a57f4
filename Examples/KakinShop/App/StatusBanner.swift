import KakinShopModel
import SwiftUI

/// The subscription's state in one line, with what to do about it: update the payment method
/// when the App Store could not charge, or manage the subscription otherwise.
struct StatusBanner: View {
    @Environment(ShopModel.self) private var model

    var body: some View {
        let banner = model.banner
        if let message = banner.message() {
            VStack(alignment: .leading, spacing: 8) {
                Label(message, systemImage: Self.symbol(banner))
                    .foregroundStyle(banner.needsAction ? Color.orange : Color.primary)
                if banner.needsAction {
                    Button("Update Payment Method") { model.manageSubscriptions() }
                        .buttonStyle(.borderedProminent)
                } else if banner != .expired {
                    Button("Manage Subscription") { model.manageSubscriptions() }
                        .buttonStyle(.borderless)
                }
            }
            .padding(.vertical, 4)
        }
    }

    static func symbol(_ banner: SubscriptionBanner) -> String {
        switch banner {
        case .trial: "gift"
        case .gracePeriod, .billingIssue: "creditcard.trianglebadge.exclamationmark"
        case .willNotRenew: "calendar.badge.exclamationmark"
        case .renews: "checkmark.seal"
        case .expired: "clock.badge.xmark"
        case .none: "circle"
        }
    }
}
