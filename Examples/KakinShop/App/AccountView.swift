import Kakin
import KakinShopModel
import SwiftUI

/// Who is buying, what they own and their balances; signing in and out; the subscription's
/// state and the App Store's sheets.
struct AccountView: View {
    @Environment(ShopModel.self) private var model
    @State private var userName = ""

    var body: some View {
        Form {
            Section {
                LabeledContent("App user ID", value: model.appUserID ?? "—")
                if model.isAnonymous {
                    TextField("User name", text: $userName)
                        .autocorrectionDisabled()
                    Button("Sign In") {
                        Task { if await model.logIn(userName) { userName = "" } }
                    }
                    .disabled(userName.isEmpty || model.isWorking)
                } else {
                    Button("Sign Out", role: .destructive) { Task { await model.logOut() } }
                        .disabled(model.isWorking)
                }
            } header: {
                Text("Customer")
            } footer: {
                Text(
                    model.isAnonymous
                        ? "You can buy without an account. Sign in to keep your purchases on every device: what you bought moves to your account."
                        : "Signing out keeps your purchases in your account for your next sign-in.")
            }

            Section("Subscription") {
                if model.banner != .none { StatusBanner() }
                Button("Manage Subscriptions") { model.manageSubscriptions() }
                Button("Redeem an Offer Code") { model.redeemOfferCode() }
            }

            Section("Entitlements") {
                let entitlements = model.customer?.entitlements ?? []
                if entitlements.isEmpty {
                    Text("Nothing yet").foregroundStyle(.secondary)
                }
                ForEach(entitlements.indices, id: \.self) { index in
                    let entitlement = entitlements[index]
                    LabeledContent {
                        Text(model.isEntitled(to: entitlement.identifier) ? "Active" : "Inactive")
                    } label: {
                        Text(entitlement.identifier)
                        if let expires = entitlement.expiresDate {
                            Text("until \(expires.formatted(date: .abbreviated, time: .shortened))")
                        }
                    }
                }
            }

            if !model.balances.isEmpty {
                Section("Balances") {
                    ForEach(model.balances.sorted { $0.key < $1.key }, id: \.key) { balance in
                        LabeledContent(balance.key, value: "\(balance.value)")
                    }
                }
            }

            Section {
                Button("Restore Purchases") { Task { await model.restore() } }
                Button("Refresh") { Task { await model.refresh() } }
            } footer: {
                if model.customer?.isProvisional == true {
                    Text("The purchase server cannot be reached: this is what the device knows.")
                }
            }
        }
        .formStyle(.grouped)
        .navigationTitle("Account")
        .disabled(model.store?.isPurchasing == true)
    }
}
