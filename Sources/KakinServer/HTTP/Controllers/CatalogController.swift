import AppStoreModels
import Foundation
import KakinLedger
import Hummingbird
import KakinHTTP
import KakinWire

/// `GET /v1/catalog?bundleId=&locale=`: the product list, so a new product needs no app update,
/// localized for `locale` (language match first, then the first localization).
struct CatalogController: RouteController {
    typealias CatalogProduct = CatalogAnswer.Product

    let service: PurchaseService
    /// The catalog of apps that have none of their own.
    let catalog: StoreKitConfiguration?

    func addRoutes(to routes: inout RouteTable) {
        routes.on(.catalog) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            guard let configuration = app.catalog ?? catalog else {
                throw ServerError(.notConfigured, "no catalog is configured for \(app.bundleID)")
            }
            let locale = request.uri.queryParameters.get(KakinQuery.locale) ?? "en_US"
            return JSONBody.response(
                CatalogAnswer(
                    bundleId: app.bundleID, locale: locale,
                    products: Self.products(configuration, locale: locale, grants: app.grants ?? service.grants)))
        }
    }

    static func products(
        _ configuration: StoreKitConfiguration, locale: String, grants: GrantsCatalog
    ) -> [CatalogProduct] {
        func pick(_ localizations: [StoreKitConfiguration.Localization]?) -> StoreKitConfiguration.Localization? {
            let all = localizations ?? []
            let language = locale.split(separator: "_").first.map(String.init) ?? locale
            return all.first { $0.locale == locale } ?? all.first { $0.locale?.hasPrefix(language) == true }
                ?? all.first
        }
        func describe(_ productID: String) -> [CatalogAnswer.Product.Grant] {
            grants.grants(for: productID).map { grant in
                switch grant {
                case .entitlement(let name): .init(entitlement: name)
                case .currency(let currency, let amount): .init(currency: currency, amount: amount)
                case .content: .init(content: true)
                }
            }
        }
        var products: [CatalogProduct] = []
        for product in (configuration.products ?? []) + (configuration.nonRenewingSubscriptions ?? []) {
            guard let id = product.productID else { continue }
            let text = pick(product.localizations)
            products.append(
                CatalogProduct(
                    productId: id, type: product.type?.rawValue ?? "", referenceName: product.referenceName,
                    displayName: text?.displayName, description: text?.description, displayPrice: product.displayPrice,
                    grants: describe(id)))
        }
        for subscription in configuration.allSubscriptions {
            guard let id = subscription.productID else { continue }
            let text = pick(subscription.localizations)
            products.append(
                CatalogProduct(
                    productId: id, type: subscription.type?.rawValue ?? "RecurringSubscription",
                    referenceName: subscription.referenceName, displayName: text?.displayName,
                    description: text?.description, displayPrice: subscription.displayPrice,
                    subscriptionGroupId: subscription.subscriptionGroupID,
                    subscriptionPeriod: subscription.recurringSubscriptionPeriod, grants: describe(id)))
        }
        return products.sorted { $0.productId < $1.productId }
    }
}
