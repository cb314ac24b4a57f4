public import Foundation
import KakinCore

/// What the device knows for computing entitlements while the purchase server cannot be reached:
/// which entitlement each product unlocks (learned from the server's answers and catalog), and each
/// user's last answer from the server (for balances, which only the server can count).
///
/// Kept in `offline.json` in the storage directory, replaced atomically.
public actor OfflineEntitlements {
    struct Document: Codable {
        /// Entitlement identifiers by product ID.
        var rules: [String: [String]] = [:]
        /// The last answer from the server, by app user.
        var customers: [String: CustomerInfo] = [:]
        /// When the offline grace period of each user started: their last server answer, or, for a
        /// user the server never answered for, the first time entitlements were computed offline.
        /// (Optional: files written before it was kept have none.)
        var graceStarts: [String: Date]?
    }

    private let url: URL
    private var document: Document
    /// How long entitlements computed on the device last after the server last answered.
    public let gracePeriod: TimeInterval

    /// Three days: how long, by default, the device grants what the store's own transactions give
    /// while the purchase server cannot be reached.
    public static let defaultGracePeriod: TimeInterval = 3 * 86_400

    /// Opens (or creates) the file in `directory`.
    ///
    /// - Parameter gracePeriod: how long entitlements computed on the device from the store's
    ///   transactions last after the server last answered for the user (or, when it never did,
    ///   after they were first computed offline). Past it they are inactive until the server answers.
    public init(directory: URL, gracePeriod: TimeInterval = OfflineEntitlements.defaultGracePeriod) {
        self.gracePeriod = gracePeriod
        url = directory.appendingPathComponent("offline.json")
        document = (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(Document.self, from: $0) }
            ?? Document()
    }

    /// The entitlement identifiers a product unlocks, as last learned; empty when unknown.
    public func identifiers(forProductID productID: String) -> [String] { document.rules[productID] ?? [] }

    /// Learns from a server answer received at `date`: its product-to-entitlement pairs, and the
    /// answer itself; the user's offline grace period starts again at `date`.
    public func learn(from customer: CustomerInfo, at date: Date = Date()) {
        guard customer.source == .server else { return }
        var changed = document.customers[customer.appUserID] != customer
        document.customers[customer.appUserID] = customer
        // Restarted at most once a minute, so that a stream of answers does not rewrite the file.
        if graceStart(of: customer.appUserID).map({ date.timeIntervalSince($0) >= 60 }) ?? true {
            setGraceStart(date, of: customer.appUserID)
            changed = true
        }
        for entitlement in customer.entitlements {
            var known = document.rules[entitlement.productID] ?? []
            if !known.contains(entitlement.identifier) {
                known.append(entitlement.identifier)
                document.rules[entitlement.productID] = known
                changed = true
            }
        }
        if changed { save() }
    }

    /// Learns which entitlements each product unlocks from the server's catalog.
    public func learn(rules: [String: [String]]) {
        guard !rules.isEmpty else { return }
        document.rules.merge(rules) { _, new in new }
        save()
    }

    /// The entitlements the store's own transactions give at `date`: non-consumables unless
    /// revoked, subscriptions until they expire, and none of them beyond the grace period
    /// (``gracePeriod`` after the server last answered for this user; each entitlement's
    /// `expiresDate` is at most its end, so a kept answer lapses too). Consumables give no
    /// entitlement; balances are the last ones the server confirmed for this user, and each
    /// entitlement's `environment` is the one the server last gave its purchase (`nil` for a
    /// purchase the server has not answered for), its `store` the App Store. The store knows
    /// nothing of purchases paid on the web: those of the server's last answer for this user
    /// (`store` `stripe`) are kept as it gave them, within the same grace period. Marked
    /// ``CustomerInfo/Source/device``.
    public func customer(
        appUserID: String, transactions: [StoreTransaction], at date: Date
    ) -> CustomerInfo {
        let start = graceStart(of: appUserID) ?? date
        if graceStart(of: appUserID) == nil {
            setGraceStart(date, of: appUserID)
            save()
        }
        let graceEnd = start.addingTimeInterval(gracePeriod)
        // Which App Store granted each purchase, as the server last said (the store's own
        // transactions here do not say).
        var environments: [String: CustomerInfo.Entitlement.Environment] = [:]
        for entitlement in document.customers[appUserID]?.entitlements ?? [] {
            environments[entitlement.originalTransactionID] = entitlement.environment
        }
        var entitlements: [CustomerInfo.Entitlement] = []
        for transaction in transactions.sorted(by: { $0.purchaseDate > $1.purchaseDate }) {
            guard transaction.productType != .consumable else { continue }
            let active =
                transaction.revocationDate == nil && (transaction.expirationDate.map { $0 > date } ?? true)
            let names = identifiers(forProductID: transaction.productID)
            for identifier in names.isEmpty ? [transaction.productID] : names {
                guard !entitlements.contains(where: { $0.identifier == identifier && ($0.isActive || !active) })
                else { continue }
                entitlements.removeAll { $0.identifier == identifier }
                entitlements.append(
                    CustomerInfo.Entitlement(
                        identifier: identifier, productID: transaction.productID, isActive: active,
                        expiresDate: transaction.expirationDate, revocationDate: transaction.revocationDate,
                        transactionID: transaction.id, originalTransactionID: transaction.originalID,
                        environment: environments[transaction.originalID], store: .appStore))
            }
        }
        for web in document.customers[appUserID]?.entitlements ?? [] where web.store == .stripe {
            guard !entitlements.contains(where: { $0.identifier == web.identifier && ($0.isActive || !web.isActive) })
            else { continue }
            entitlements.removeAll { $0.identifier == web.identifier }
            entitlements.append(web)
        }
        for index in entitlements.indices {
            let expires = min(entitlements[index].expiresDate ?? graceEnd, graceEnd)
            entitlements[index].expiresDate = expires
            entitlements[index].isActive = entitlements[index].isActive && expires > date
        }
        return CustomerInfo(
            appUserID: appUserID, entitlements: entitlements.sorted { $0.identifier < $1.identifier },
            balances: document.customers[appUserID]?.balances ?? [:], source: .device)
    }

    /// When `appUserID`'s grace period started, if it did.
    private func graceStart(of appUserID: String) -> Date? { document.graceStarts?[appUserID] }

    private func setGraceStart(_ date: Date, of appUserID: String) {
        var starts = document.graceStarts ?? [:]
        starts[appUserID] = date
        document.graceStarts = starts
    }

    private func save() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try? FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? encoder.encode(document).write(to: url, options: .atomic)
    }
}
