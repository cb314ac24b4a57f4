import AppStoreModels
public import Foundation

extension SandboxCatalog {
    /// Answers a product request as the App Store does for a customer of `storefront`.
    ///
    /// Each requested ID gives either a product, in the storefront's language and currency, or an
    /// invalid identifier with its reason. Both lists keep the order of `ids`; a repeated ID is
    /// answered once. The checks run in this order:
    /// 1. a problem with the whole app (``CatalogOptions/appProblem``, a wildcard bundle ID);
    /// 2. a malformed ID;
    /// 3. an ID not in the catalog: ``InvalidProductReason/bundlePrefixMismatch`` when it lacks the
    ///    configured bundle ID prefix, ``InvalidProductReason/unknownProduct`` otherwise;
    /// 4. a product not cleared for sale, then one not sold in this storefront;
    /// 5. a product with no price in the storefront's currency.
    public func localizedProducts(
        for ids: [String], storefront: Storefront
    ) -> (products: [LocalizedProduct], invalidIdentifiers: [InvalidProductIdentifier]) {
        var products: [LocalizedProduct] = []
        var invalid: [InvalidProductIdentifier] = []
        var seen: Set<String> = []
        for id in ids where seen.insert(id).inserted {
            switch lookUp(id, in: storefront) {
            case .product(let product): products.append(product)
            case .invalid(let entry): invalid.append(entry)
            }
        }
        return (products, invalid)
    }

    /// The product with this ID as `storefront` shows it.
    ///
    /// - Throws: ``SandboxError/Code/unknownProduct`` for an ID that is not in the catalog
    ///   (including malformed ones and ones of another app), ``SandboxError/Code/priceUnavailable``
    ///   when the storefront's currency has no price, and ``SandboxError/Code/productUnavailable``
    ///   for every other reason the product cannot be sold.
    public func localizedProduct(id: String, storefront: Storefront) throws(SandboxError) -> LocalizedProduct {
        switch lookUp(id, in: storefront) {
        case .product(let product):
            return product
        case .invalid(let entry):
            let code: SandboxError.Code
            switch entry.reason {
            case .unknownProduct, .malformedIdentifier, .bundlePrefixMismatch: code = .unknownProduct
            case .priceUnavailable: code = .priceUnavailable
            default: code = .productUnavailable
            }
            throw SandboxError(code, "\(id): \(entry.message)")
        }
    }

    /// The price of `product` in `storefront`: the override for that storefront if there is one,
    /// otherwise the file's price carried over by ``priceTable``; `nil` when the table has no
    /// price in the storefront's currency.
    public func price(of product: CatalogProduct, in storefront: Storefront) -> Decimal? {
        if let pinned = options.priceOverrides[product.id]?[storefront.countryCode] { return pinned }
        return priceTable.convert(product.price, from: product.currencyCode, to: storefront.currencyCode)
    }

    /// Whether `product` is cleared for sale and sold in `storefront`.
    public func isAvailable(_ product: CatalogProduct, in storefront: Storefront) -> Bool {
        !options.notClearedForSale.contains(product.id)
            && !(options.unavailableStorefronts[product.id]?.contains(storefront.countryCode) ?? false)
    }

    private enum Answer {
        case product(LocalizedProduct)
        case invalid(InvalidProductIdentifier)
    }

    private func lookUp(_ id: String, in storefront: Storefront) -> Answer {
        func invalid(_ reason: InvalidProductReason, _ message: String? = nil) -> Answer {
            .invalid(InvalidProductIdentifier(identifier: id, reason: reason, message: message))
        }
        if let problem = options.appProblem { return invalid(problem) }
        if let bundleID = options.bundleID, ProductIdentifierRules.isWildcard(bundleID) {
            return invalid(.wildcardAppID)
        }
        guard ProductIdentifierRules.isWellFormed(id) else { return invalid(.malformedIdentifier) }
        guard let product = product(id: id) else {
            if let bundleID = options.bundleID, !ProductIdentifierRules.hasBundlePrefix(id, bundleID: bundleID) {
                return invalid(
                    .bundlePrefixMismatch, "The product ID does not start with the app's bundle ID \(bundleID).")
            }
            return invalid(.unknownProduct)
        }
        if options.notClearedForSale.contains(id) { return invalid(.notClearedForSale) }
        if options.unavailableStorefronts[id]?.contains(storefront.countryCode) ?? false {
            return invalid(
                .notAvailableInStorefront, "The product is not sold in the \(storefront.countryCode) storefront.")
        }
        guard let localized = localize(product, in: storefront) else {
            return invalid(.priceUnavailable, "The product has no price in \(storefront.currencyCode).")
        }
        return .product(localized)
    }

    /// `product` in the storefront's language and currency, or `nil` when a price is missing.
    private func localize(_ product: CatalogProduct, in storefront: Storefront) -> LocalizedProduct? {
        guard let price = price(of: product, in: storefront) else { return nil }
        var subscription: LocalizedProduct.SubscriptionInfo?
        if let details = product.subscription {
            guard let info = subscriptionInfo(details, of: product, in: storefront) else { return nil }
            subscription = info
        }
        let texts = LocalizationChooser.choose(product.localizations, for: storefront)
        return LocalizedProduct(
            id: product.id, type: product.type, displayName: texts?.displayName ?? product.referenceName ?? product.id,
            description: texts?.description ?? "", localizationLocale: texts?.locale, price: price,
            displayPrice: PriceFormatter.string(for: price, in: storefront), currencyCode: storefront.currencyCode,
            priceLocaleIdentifier: storefront.localeIdentifier, storefrontCountryCode: storefront.countryCode,
            storefrontIdentifier: storefront.identifier, isFamilyShareable: product.isFamilyShareable,
            subscription: subscription, isDownloadable: product.hostedContent != nil,
            downloadContentVersion: product.hostedContent?.contentVersion,
            downloadContentLengths: product.hostedContent.map { [$0.contentLength] } ?? [])
    }

    private func subscriptionInfo(
        _ details: CatalogProduct.Subscription, of product: CatalogProduct, in storefront: Storefront
    ) -> LocalizedProduct.SubscriptionInfo? {
        var introductory: LocalizedProduct.Offer?
        if let offer = details.introductoryOffer {
            guard
                let made = self.offer(
                    id: nil, kind: .introductory, mode: offer.paymentMode, period: offer.subscriptionPeriod,
                    count: offer.numberOfPeriods, price: offer.displayPriceValue, of: product, in: storefront)
            else { return nil }
            introductory = made
        }
        var promotional: [LocalizedProduct.Offer] = []
        for offer in details.promotionalOffers {
            guard
                let made = self.offer(
                    id: offer.offerID, kind: .promotional, mode: offer.paymentMode, period: offer.subscriptionPeriod,
                    count: offer.numberOfPeriods, price: offer.displayPriceValue, of: product, in: storefront)
            else { return nil }
            promotional.append(made)
        }
        var winBack: [LocalizedProduct.Offer] = []
        for offer in details.winBackOffers {
            guard
                let made = self.offer(
                    id: offer.offerID, kind: .winBack, mode: offer.paymentMode, period: offer.subscriptionPeriod,
                    count: offer.numberOfPeriods, price: offer.displayPriceValue, of: product, in: storefront)
            else { return nil }
            winBack.append(made)
        }
        let groupTexts = LocalizationChooser.choose(details.groupLocalizations, for: storefront)
        return LocalizedProduct.SubscriptionInfo(
            subscriptionGroupID: details.groupID,
            subscriptionGroupDisplayName: groupTexts?.displayName ?? details.groupName,
            groupLevel: details.groupLevel, subscriptionPeriod: details.period.iso8601, introductoryOffer: introductory,
            promotionalOffers: promotional, winBackOffers: winBack)
    }

    func offer(
        id: String?, kind: LocalizedProduct.OfferKind, mode: StoreKitConfiguration.PaymentMode?, period: String?,
        count: Int?, price: Decimal?, of product: CatalogProduct, in storefront: Storefront
    ) -> LocalizedProduct.Offer? {
        let mode = mode ?? .free
        let source: Decimal = mode == .free ? 0 : (price ?? 0)
        guard let converted = priceTable.convert(source, from: product.currencyCode, to: storefront.currencyCode)
        else { return nil }
        return LocalizedProduct.Offer(
            id: id, type: kind, paymentMode: mode, period: period ?? "", periodCount: max(count ?? 1, 1),
            price: converted, displayPrice: PriceFormatter.string(for: converted, in: storefront))
    }
}
