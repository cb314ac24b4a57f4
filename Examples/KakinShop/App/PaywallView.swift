import Kakin
import KakinShopModel
import SwiftUI

/// The shop: the subscription's state, then Premium, the unlocks and the consumables, each with its
/// localized price and offers, then restore and offer codes.
struct PaywallView: View {
    @Environment(ShopModel.self) private var model

    var body: some View {
        let paywall = model.paywall
        List {
            if model.banner != .none {
                Section { StatusBanner() }
            }
            if !paywall.subscriptions.isEmpty {
                Section {
                    ForEach(paywall.subscriptions) { ProductRow(item: $0) }
                } header: {
                    Text("Premium")
                } footer: {
                    Text("Renews automatically until cancelled. Manage or cancel in your App Store account settings.")
                }
            }
            if !paywall.unlocks.isEmpty {
                Section("Unlocks") {
                    ForEach(paywall.unlocks) { ProductRow(item: $0) }
                }
            }
            if !paywall.consumables.isEmpty {
                Section("Points and credits") {
                    ForEach(paywall.consumables) { ProductRow(item: $0) }
                }
            }
            Section {
                Button("Restore Purchases") { Task { await model.restore() } }
                Button("Redeem an Offer Code") { model.redeemOfferCode() }
            } footer: {
                if !model.invalidProducts.isEmpty {
                    Text("Not for sale: " + model.invalidProducts.map { "\($0.id) (\($0.message))" }.joined(separator: ", "))
                }
            }
        }
        .navigationTitle("Kakin Shop")
        .overlay {
            if paywall.isEmpty, !model.isWorking {
                ContentUnavailableView(
                    "Nothing for sale", systemImage: "cart",
                    description: Text("The products could not be loaded. Pull to try again."))
            }
        }
        .refreshable { [model] in
            await model.loadProducts()
            await model.refresh()
        }
        .disabled(model.store?.isPurchasing == true)
    }
}

/// One product: its name and description, its price as a buy button (or that it is owned), its
/// introductory offer, and the promotional and win-back offers the customer may buy with.
struct ProductRow: View {
    @Environment(ShopModel.self) private var model
    let item: PaywallItem

    var body: some View {
        VStack(alignment: .leading, spacing: 8) {
            HStack(alignment: .firstTextBaseline) {
                VStack(alignment: .leading, spacing: 2) {
                    Text(item.product.displayName).font(.headline)
                    Text(item.product.description).font(.subheadline).foregroundStyle(.secondary)
                }
                Spacer()
                if item.canBuy {
                    Button(item.priceText) { Task { await model.purchase(item.product) } }
                        .buttonStyle(.borderedProminent)
                } else {
                    Label("Owned", systemImage: "checkmark.seal.fill")
                        .foregroundStyle(.green)
                }
            }
            if let intro = item.introductoryOffer, item.canBuy {
                Text("Starts with \(OfferText.describe(intro))").font(.footnote).foregroundStyle(.tint)
            }
            if item.canBuy {
                ForEach(item.promotionalOffers, id: \.self) { offer in
                    offerButton(offer, title: "Special offer")
                }
            }
            // Win-back offers are for customers whose subscription lapsed; the store checks.
            if model.banner == .expired {
                ForEach(item.winBackOffers, id: \.self) { offer in
                    offerButton(offer, title: "Welcome back")
                }
            }
            if item.hasContent {
                Label("Includes downloadable content", systemImage: "arrow.down.circle").font(.caption)
            }
        }
        .buttonStyle(.borderless)
        .padding(.vertical, 4)
    }

    private func offerButton(_ offer: SubscriptionOffer, title: String) -> some View {
        Button("\(title): \(OfferText.describe(offer))") {
            Task { await model.purchase(item.product, offer: offer) }
        }
        .font(.footnote)
        .buttonStyle(.bordered)
    }
}
