import AppStoreModels
import Foundation

/// Turns `.storekit` configurations into checked ``CatalogProduct``s, one file at a time.
struct CatalogBuilder {
    let options: CatalogOptions
    let storefronts: [Storefront]
    private(set) var products: [CatalogProduct] = []
    private(set) var positions: [String: Int] = [:]
    private var groupIDs: Set<String> = []

    init(options: CatalogOptions, storefronts: [Storefront]) {
        self.options = options
        self.storefronts = storefronts
    }

    /// Adds every product of `configuration`.
    mutating func add(_ configuration: StoreKitConfiguration) throws(SandboxError) {
        let file = configuration.identifier.map { "configuration \($0)" } ?? "a configuration"
        let countryCode = configuration.settings?.storefront ?? Storefront.usa.countryCode
        guard let storefront = Storefront.lookup(countryCode: countryCode, in: storefronts) else {
            throw SandboxError(
                .catalogInvalid, "The storefront \(countryCode) of \(file) is unknown, so its prices have no currency.")
        }
        let currency = storefront.currencyCode
        for entry in (configuration.products ?? []) + (configuration.nonRenewingSubscriptions ?? []) {
            try insert(try product(entry, currency: currency, file: configuration.identifier))
        }
        for group in configuration.subscriptionGroups ?? [] {
            guard let groupID = group.id, !groupID.isEmpty else {
                throw SandboxError(.catalogInvalid, "A subscription group of \(file) has no ID.")
            }
            guard groupIDs.insert(groupID).inserted else {
                throw SandboxError(.catalogInvalid, "The subscription group \(groupID) appears twice.")
            }
            for (index, entry) in (group.subscriptions ?? []).enumerated() {
                let made = try subscription(
                    entry, group: group, groupID: groupID, defaultLevel: index + 1, currency: currency,
                    file: configuration.identifier)
                try insert(made)
            }
        }
    }

    /// Checks that every option names a product and storefront of the catalog.
    func checkOptions() throws(SandboxError) {
        if let problem = options.appProblem, !problem.isAppLevel {
            throw SandboxError(
                .catalogInvalid, "appProblem must concern the whole app; \(problem.rawValue) concerns one product.")
        }
        let named =
            Array(options.hostedContent.keys) + Array(options.notClearedForSale)
            + Array(options.unavailableStorefronts.keys) + Array(options.priceOverrides.keys)
            + Array(options.codeOffers.keys) + options.offerCodes.values.map(\.productID)
            + Array(options.commitmentPlans.keys)
        for productID in named.sorted() where positions[productID] == nil {
            throw SandboxError(.catalogInvalid, "The catalog options name \(productID), which is not in the catalog.")
        }
        for (code, entry) in options.offerCodes.sorted(by: { $0.key < $1.key }) {
            guard let position = positions[entry.productID],
                products[position].codeOffers.contains(where: { $0.offerID == entry.offerID })
            else {
                throw SandboxError(
                    .catalogInvalid,
                    "The offer code \(code) names the offer \(entry.offerID), which \(entry.productID) does not have.")
            }
        }
        try checkCommitmentPlans()
        let countryCodes =
            options.unavailableStorefronts.values.flatMap { $0 } + options.priceOverrides.values.flatMap(\.keys)
        for countryCode in countryCodes.sorted()
        where Storefront.lookup(countryCode: countryCode, in: storefronts) == nil {
            throw SandboxError(.catalogInvalid, "The catalog options name the unknown storefront \(countryCode).")
        }
    }

    private mutating func insert(_ product: CatalogProduct) throws(SandboxError) {
        guard positions[product.id] == nil else {
            throw SandboxError(.duplicateProduct, "The product ID \(product.id) appears more than once.")
        }
        positions[product.id] = products.count
        products.append(product)
    }

    /// A consumable, non-consumable or non-renewing subscription.
    private func product(
        _ entry: StoreKitConfiguration.Product, currency: String, file: String?
    ) throws(SandboxError)
        -> CatalogProduct
    {
        let id = try checkedID(entry.productID, referenceName: entry.referenceName)
        let type: ProductType
        switch entry.type {
        case .consumable?: type = .consumable
        case .nonConsumable?: type = .nonConsumable
        case .nonRenewingSubscription?: type = .nonRenewingSubscription
        default:
            throw SandboxError(
                .catalogInvalid, "\(id) has the type \(entry.type?.rawValue ?? "none"), which is not a product type.")
        }
        let hosted = options.hostedContent[id]
        if hosted != nil, type != .nonConsumable {
            throw SandboxError(.catalogInvalid, "\(id) has hosted content but only non-consumables can.")
        }
        var made = CatalogProduct(
            id: id, type: type, referenceName: entry.referenceName,
            price: try checkedPrice(entry.displayPriceValue, entry.displayPrice, of: id), currencyCode: currency,
            localizations: entry.localizations ?? [], isFamilyShareable: entry.familyShareable ?? false,
            hostedContent: hosted, configurationIdentifier: file)
        made.codeOffers = options.codeOffers[id] ?? []
        var offerIDs: Set<String> = []
        for offer in made.codeOffers {
            try checkOfferID(offer.offerID, kind: "offer-code", of: id, seen: &offerIDs)
            if offer.displayPrice != nil, offer.displayPriceValue == nil {
                throw SandboxError(
                    .catalogInvalid, "The offer-code offer \(offer.offerID ?? "") of \(id) has no plain price.")
            }
        }
        return made
    }

    private func checkOfferID(
        _ offerID: String?, kind: String, of id: String, seen: inout Set<String>
    ) throws(SandboxError) {
        guard let offerID, !offerID.isEmpty, seen.insert(offerID).inserted else {
            throw SandboxError(.catalogInvalid, "A \(kind) offer of \(id) has no ID or a repeated one.")
        }
    }

    /// An auto-renewable subscription of a group.
    private func subscription(
        _ entry: StoreKitConfiguration.Subscription, group: StoreKitConfiguration.SubscriptionGroup, groupID: String,
        defaultLevel: Int, currency: String, file: String?
    ) throws(SandboxError) -> CatalogProduct {
        let id = try checkedID(entry.productID, referenceName: entry.referenceName)
        if let type = entry.type, type != .recurringSubscription {
            throw SandboxError(.catalogInvalid, "\(id) is in a subscription group but has the type \(type.rawValue).")
        }
        if let declared = entry.subscriptionGroupID, declared != groupID {
            throw SandboxError(.catalogInvalid, "\(id) names the group \(declared) but is in the group \(groupID).")
        }
        if options.hostedContent[id] != nil {
            throw SandboxError(.catalogInvalid, "\(id) has hosted content but only non-consumables can.")
        }
        guard let period = entry.recurringSubscriptionPeriodValue else {
            throw SandboxError(
                .catalogInvalid,
                "\(id) has the period \(entry.recurringSubscriptionPeriod ?? "none"), which is not an ISO 8601 period.")
        }
        if let offer = entry.introductoryOffer {
            try checkOffer(
                offer.paymentMode, offer.subscriptionPeriod, offer.displayPriceValue, name: "introductory", of: id)
        }
        var offerIDs: Set<String> = []
        for offer in entry.adHocOffers ?? [] {
            guard let offerID = offer.offerID, !offerID.isEmpty, offerIDs.insert(offerID).inserted else {
                throw SandboxError(.catalogInvalid, "A promotional offer of \(id) has no ID or a repeated one.")
            }
            try checkOffer(offer.paymentMode, offer.subscriptionPeriod, offer.displayPriceValue, name: offerID, of: id)
        }
        let codeOffers = (entry.codeOffers ?? []) + (options.codeOffers[id] ?? [])
        var codeOfferIDs: Set<String> = []
        for offer in codeOffers {
            try checkOfferID(offer.offerID, kind: "offer-code", of: id, seen: &codeOfferIDs)
            try checkOffer(
                offer.paymentMode, offer.subscriptionPeriod, offer.displayPriceValue, name: offer.offerID ?? "", of: id)
        }
        var winBackIDs: Set<String> = []
        for offer in entry.winbackOffers ?? [] {
            try checkOfferID(offer.offerID, kind: "win-back", of: id, seen: &winBackIDs)
            try checkOffer(
                offer.paymentMode, offer.subscriptionPeriod, offer.displayPriceValue, name: offer.offerID ?? "", of: id)
        }
        var details = CatalogProduct.Subscription(
            groupID: groupID, groupName: group.name, groupLocalizations: group.localizations ?? [],
            groupLevel: entry.groupNumber ?? defaultLevel, period: period, introductoryOffer: entry.introductoryOffer,
            promotionalOffers: entry.adHocOffers ?? [])
        details.winBackOffers = entry.winbackOffers ?? []
        var made = CatalogProduct(
            id: id, type: .autoRenewableSubscription, referenceName: entry.referenceName,
            price: try checkedPrice(entry.displayPriceValue, entry.displayPrice, of: id), currencyCode: currency,
            localizations: entry.localizations ?? [], isFamilyShareable: entry.familyShareable ?? false,
            subscription: details, configurationIdentifier: file)
        made.codeOffers = codeOffers
        return made
    }

    private func checkedID(_ productID: String?, referenceName: String?) throws(SandboxError) -> String {
        guard let id = productID, !id.isEmpty else {
            throw SandboxError(.catalogInvalid, "The product \(referenceName ?? "without a name") has no product ID.")
        }
        guard ProductIdentifierRules.isWellFormed(id) else {
            throw SandboxError(.catalogInvalid, "The product ID \"\(id)\" is malformed.")
        }
        if let bundleID = options.bundleID, !ProductIdentifierRules.isWildcard(bundleID),
            !ProductIdentifierRules.hasBundlePrefix(id, bundleID: bundleID)
        {
            throw SandboxError(.catalogInvalid, "The product ID \(id) does not start with the bundle ID \(bundleID).")
        }
        return id
    }

    private func checkedPrice(_ value: Decimal?, _ text: String?, of id: String) throws(SandboxError) -> Decimal {
        guard let price = value else {
            throw SandboxError(.catalogInvalid, "\(id) has the price \(text ?? "none"), which is not a plain number.")
        }
        return price
    }

    private func checkOffer(
        _ mode: StoreKitConfiguration.PaymentMode?, _ period: String?, _ price: Decimal?, name: String, of id: String
    ) throws(SandboxError) {
        guard let mode, mode.isKnown else {
            throw SandboxError(.catalogInvalid, "The \(name) offer of \(id) has no known payment mode.")
        }
        guard period.flatMap(SubscriptionPeriod.init(iso8601:)) != nil else {
            throw SandboxError(.catalogInvalid, "The \(name) offer of \(id) has no ISO 8601 period.")
        }
        if mode != .free, price == nil {
            throw SandboxError(.catalogInvalid, "The \(name) offer of \(id) is not free but has no price.")
        }
    }
}
