public import Kakin

/// Buying, restoring and the customer's identity: each a call of the SDK's ``KakinStore``, with
/// its outcome in ``ShopModel/notice``.
extension ShopModel {
    /// Buys `product`, with one of its offers if given (a promotional offer is signed by the
    /// purchase server first; a win-back offer needs no signature; the introductory offer asks
    /// the server to decide eligibility). Returns the outcome, or `nil` when the purchase failed
    /// (the reason is in ``notice``). A cancel is an outcome with no notice.
    ///
    /// A product with hosted content is downloaded after the server acknowledged it and before the
    /// purchase finishes; ``downloads`` follows its progress.
    @discardableResult
    public func purchase(_ product: StoreProduct, offer: SubscriptionOffer? = nil) async -> PurchaseOutcome? {
        guard let store else { return nil }
        do {
            let outcome = try await store.purchase(product, offer: offer)
            switch outcome {
            case .purchased(_, .some): report(.purchased(productName: product.displayName))
            case .purchased(_, .none): report(.awaitingServer(productName: product.displayName))
            case .pending: report(.pending(productName: product.displayName))
            case .cancelled: report(nil)
            }
            // A subscription changes which offers the customer may still take.
            if product.type == .autoRenewableSubscription, case .purchased = outcome { await reloadProductsQuietly() }
            return outcome
        } catch {
            report(.failed(error))
            return nil
        }
    }

    /// Restores non-consumables and subscriptions (StoreKit may ask the customer to sign in) and
    /// reads the customer again. `false` when it failed (the reason is in ``notice``).
    @discardableResult
    public func restore() async -> Bool {
        guard let store else { return false }
        do {
            try await store.restore()
            report(.restored)
            await reloadProductsQuietly()
            return true
        } catch {
            report(.failed(error))
            return false
        }
    }

    /// Signs the customer in as `appUserID` (your app's ID of the user): what the anonymous
    /// customer bought moves to that user on the server. `false` when it failed (the server could
    /// not be reached, an ID that cannot name a user); nothing changed then.
    @discardableResult
    public func logIn(_ appUserID: String) async -> Bool {
        guard let store else { return false }
        isWorking = true
        defer { isWorking = false }
        do {
            try await store.logIn(appUserID)
            report(.loggedIn(appUserID))
            await reloadProductsQuietly()
            return true
        } catch {
            report(.failed(error))
            return false
        }
    }

    /// Signs the user out: the shop continues with a new anonymous customer, and what the user
    /// bought stays in their account for their next log-in. `false` when nobody was logged in.
    @discardableResult
    public func logOut() async -> Bool {
        guard let store else { return false }
        isWorking = true
        defer { isWorking = false }
        do {
            try await store.logOut()
            report(.loggedOut)
            await reloadProductsQuietly()
            return true
        } catch {
            report(.failed(error))
            return false
        }
    }

    /// Reloads the products (their offers' eligibility) without replacing the notice of the action
    /// that led here.
    func reloadProductsQuietly() async {
        let kept = notice
        await loadProducts()
        report(kept)
    }
}
