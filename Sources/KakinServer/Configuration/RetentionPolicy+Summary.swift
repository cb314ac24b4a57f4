import Foundation

extension RetentionRule {
    /// The rule's conditions in words, one a line (`products: …`, `tenure: at least 30 days`…);
    /// empty when the rule matches everyone. For operators reading the configured rules.
    public var conditions: [String] {
        var lines: [String] = []
        if !products.isEmpty { lines.append("products: " + products.sorted().joined(separator: ", ")) }
        if !locales.isEmpty { lines.append("locales: " + locales.joined(separator: ", ")) }
        if !states.isEmpty { lines.append("states: " + states.map(\.rawValue).sorted().joined(separator: ", ")) }
        switch (minTenureDays, maxTenureDays) {
        case (let least?, let most?): lines.append("tenure: \(least) to \(most) days")
        case (let least?, nil): lines.append("tenure: at least \(least) days")
        case (nil, let most?): lines.append("tenure: at most \(most) days")
        case (nil, nil): break
        }
        if let refunded { lines.append(refunded ? "refunded: at least once" : "refunded: never") }
        if let floor = minLifetimeValue {
            lines.append("lifetime value: at least \(RetentionAmount.text(floor.milliunits)) \(floor.currency)")
        }
        return lines
    }
}

extension RetentionAmount {
    /// Milliunits as a decimal amount: 1990 is `1.99`, 5000 is `5`.
    static func text(_ milliunits: Int64) -> String {
        let whole = milliunits / 1000
        var fraction = String(format: "%03lld", abs(milliunits % 1000))
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)"
    }
}

extension RetentionAnswer {
    /// What the App Store shows, in words.
    public var summary: String {
        switch self {
        case .message(let id): "message \(id)"
        case .alternateProduct(let productID, let id): "message \(id), suggesting \(productID)"
        case .promotionalOffer(let offerID, let id): "message \(id), with the promotional offer \(offerID)"
        }
    }
}

extension RetentionSubscriber {
    /// The subscriber as the rules read them, in one line.
    public var summary: String {
        let value = lifetimeValue.sorted { $0.key < $1.key }.map { "\(RetentionAmount.text($0.value)) \($0.key)" }
        return "\(productID) in \(locale): \(state.rawValue), \(tenureDays) days subscribed, \(refunds) refunds, "
            + "paid \(value.isEmpty ? "nothing" : value.joined(separator: " + "))"
    }
}

extension PurchaseService.RetentionPreview {
    /// The preview in a few lines: the subscriber, the rule and what the App Store would show.
    public var lines: [String] {
        guard let subscriber else {
            return [
                "the ledger knows no subscription \(originalTransactionID) of \(bundleID): "
                    + "the server answers with no choice, and the App Store shows the default message"
            ]
        }
        var lines = ["subscriber: \(subscriber.summary)"]
        if let rule {
            lines.append("rule: \(rule.name)")
            lines.append("shows: \(rule.answer.summary)")
        } else {
            lines.append(
                "no rule matches: the App Store shows the default message of \(subscriber.productID) in \(locale)")
        }
        return lines
    }
}
