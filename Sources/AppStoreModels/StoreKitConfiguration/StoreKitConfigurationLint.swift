/// Checks a `.storekit` catalog against the rules App Store Connect applies when products are
/// registered, so that a catalog tested locally can be entered in App Store Connect as it is.
///
/// Xcode accepts files that App Store Connect would refuse: an ID with a hyphen, two products with
/// one ID, a product without a price or with a two-word description. Each problem names the product
/// and the JSON path of the offending value, such as `products[2].localizations[0].description`.
///
/// ```swift
/// let problems = StoreKitConfigurationLint(bundleID: "com.example.kakin").problems(in: configuration)
/// for problem in problems { print(problem) }
/// ```
public struct StoreKitConfigurationLint: Sendable {
    /// When set, product IDs are expected to start with it and a dot (a warning otherwise).
    public var bundleID: String?
    /// The products that carry Apple-hosted content, which `.storekit` files cannot say themselves
    /// (Kakin reads them from the `.catalog.json` side file).
    public var hostedContentProductIDs: Set<String>

    /// The shortest description App Store Connect accepts for a product localization.
    public static let minimumDescriptionLength = 10

    /// Creates a checker; without a bundle ID the prefix rule is not applied.
    public init(bundleID: String? = nil, hostedContentProductIDs: Set<String> = []) {
        self.bundleID = bundleID
        self.hostedContentProductIDs = hostedContentProductIDs
    }

    /// How serious a problem is: an error blocks registration, a warning is a likely mistake.
    public enum Severity: String, Hashable, Sendable {
        /// The catalog cannot be registered as it is.
        case error
        /// Probably a mistake, but the catalog works.
        case warning
    }

    /// One problem found in a catalog.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// Whether App Store Connect would refuse the product.
        public var severity: Severity
        /// The product the problem is about, when it has a (non-empty) ID.
        public var productID: String?
        /// The JSON path of the value at fault, such as `subscriptionGroups[0].subscriptions[1].groupNumber`.
        public var path: String
        /// What is wrong and what App Store Connect expects, in one sentence.
        public var message: String

        /// Creates a problem.
        public init(severity: Severity, productID: String?, path: String, message: String) {
            self.severity = severity
            self.productID = productID
            self.path = path
            self.message = message
        }

        /// `error: com.example.app.coins (products[0].displayPrice): the product has no price`.
        public var description: String {
            let subject = productID.map { "\($0) (\(path))" } ?? path
            return "\(severity.rawValue): \(subject): \(message)"
        }
    }

    /// Every problem in `configuration`, in file order; empty when the catalog can be registered as it is.
    public func problems(in configuration: StoreKitConfiguration) -> [Problem] {
        var report = Report()
        var seen: [String: String] = [:]
        for entry in entries(of: configuration) {
            checkIdentifier(entry, seen: &seen, into: &report)
            checkPrice(entry, into: &report)
            checkLocalizations(entry, into: &report)
        }
        checkHostedContent(configuration, into: &report)
        checkLevels(configuration, into: &report)
        return report.problems
    }

    /// Whether App Store Connect accepts `identifier` as a product ID: letters, digits, underscores
    /// and periods only, and not empty.
    public static func isValidProductID(_ identifier: String) -> Bool {
        !identifier.isEmpty
            && identifier.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", ".": true
                default: false
                }
            }
    }

    // MARK: The rules

    private func checkIdentifier(_ entry: Entry, seen: inout [String: String], into report: inout Report) {
        let path = entry.path + ".productID"
        guard let identifier = entry.productID, !identifier.isEmpty else {
            report.error(nil, path, "the product has no product ID")
            return
        }
        if !Self.isValidProductID(identifier) {
            report.error(
                identifier, path, "a product ID may contain only letters, digits, underscores and periods")
        }
        if let first = seen[identifier] {
            report.error(identifier, path, "the product ID is already used at \(first); product IDs must be unique")
        } else {
            seen[identifier] = entry.path
        }
        if let bundleID, !bundleID.isEmpty, !bundleID.contains("*"),
            !(identifier.hasPrefix(bundleID + ".") && identifier.count > bundleID.count + 1)
        {
            report.warning(identifier, path, "the product ID does not start with the bundle ID \"\(bundleID).\"")
        }
    }

    private func checkPrice(_ entry: Entry, into report: inout Report) {
        let path = entry.path + ".displayPrice"
        guard let price = entry.displayPrice, !price.isEmpty else {
            report.error(entry.label, path, "the product has no price")
            return
        }
        if StoreKitConfiguration.decimalPrice(price) == nil {
            report.error(entry.label, path, "the price \"\(price)\" is not a plain number such as 0.99")
        }
    }

    private func checkLocalizations(_ entry: Entry, into report: inout Report) {
        guard let localizations = entry.localizations, !localizations.isEmpty else {
            report.warning(
                entry.label, entry.path + ".localizations",
                "the product has no localization; App Store Connect needs at least one before review")
            return
        }
        for (index, localization) in localizations.enumerated() {
            let path = "\(entry.path).localizations[\(index)]"
            let locale = localization.locale.map { " (\($0))" } ?? ""
            if (localization.displayName ?? "").allSatisfy(\.isWhitespace) {
                report.error(entry.label, path + ".displayName", "the localization\(locale) has no display name")
            }
            let description = (localization.description ?? "").trimmingWhitespace
            if description.count < Self.minimumDescriptionLength {
                report.error(
                    entry.label, path + ".description",
                    "the localization\(locale) has a description of \(description.count) characters; "
                        + "App Store Connect needs at least \(Self.minimumDescriptionLength)")
            }
        }
    }

    private func checkHostedContent(_ configuration: StoreKitConfiguration, into report: inout Report) {
        let products = entries(of: configuration)
        for identifier in hostedContentProductIDs.sorted() {
            let matches = products.filter { $0.productID == identifier }
            guard let product = matches.first else {
                report.warning(
                    identifier, "hostedContent", "hosted content is declared for a product the file does not have")
                continue
            }
            if product.type != .nonConsumable {
                let type = product.type.map { "a \($0.rawValue)" } ?? "a product without a type"
                report.error(
                    identifier, product.path, "only non-consumables can have hosted content, and this is \(type)")
            }
        }
    }

    private func checkLevels(_ configuration: StoreKitConfiguration, into report: inout Report) {
        for (groupIndex, group) in (configuration.subscriptionGroups ?? []).enumerated() {
            var levels: [Int: String] = [:]
            for (index, subscription) in (group.subscriptions ?? []).enumerated() {
                let path = "subscriptionGroups[\(groupIndex)].subscriptions[\(index)]"
                let label = subscription.productID.flatMap { $0.isEmpty ? nil : $0 }
                guard let level = subscription.groupNumber else {
                    report.error(label, path + ".groupNumber", "the subscription has no level in its group")
                    continue
                }
                guard level >= 1 else {
                    report.error(label, path + ".groupNumber", "the level \(level) is not a positive number")
                    continue
                }
                if let other = levels[level] {
                    report.error(
                        label, path + ".groupNumber",
                        "level \(level) is already taken by \(other); each subscription in a group needs its own level")
                } else {
                    levels[level] = label ?? path
                }
            }
        }
    }

    // MARK: Products of every kind, with their paths

    /// What the rules need of a product, whichever list it is in.
    private struct Entry {
        let path: String
        let productID: String?
        let type: StoreKitConfiguration.ProductType?
        let displayPrice: String?
        let localizations: [StoreKitConfiguration.Localization]?

        /// The product ID when there is one, for reports.
        var label: String? { productID.flatMap { $0.isEmpty ? nil : $0 } }
    }

    private func entries(of configuration: StoreKitConfiguration) -> [Entry] {
        var entries: [Entry] = []
        for (index, product) in (configuration.products ?? []).enumerated() {
            entries.append(Self.entry(product, path: "products[\(index)]"))
        }
        for (index, product) in (configuration.nonRenewingSubscriptions ?? []).enumerated() {
            entries.append(Self.entry(product, path: "nonRenewingSubscriptions[\(index)]"))
        }
        for (groupIndex, group) in (configuration.subscriptionGroups ?? []).enumerated() {
            for (index, subscription) in (group.subscriptions ?? []).enumerated() {
                entries.append(
                    Entry(
                        path: "subscriptionGroups[\(groupIndex)].subscriptions[\(index)]",
                        productID: subscription.productID, type: subscription.type,
                        displayPrice: subscription.displayPrice, localizations: subscription.localizations))
            }
        }
        return entries
    }

    private static func entry(_ product: StoreKitConfiguration.Product, path: String) -> Entry {
        Entry(
            path: path, productID: product.productID, type: product.type, displayPrice: product.displayPrice,
            localizations: product.localizations)
    }

    /// Problems in the order they were found.
    private struct Report {
        var problems: [Problem] = []

        mutating func error(_ productID: String?, _ path: String, _ message: String) {
            problems.append(Problem(severity: .error, productID: productID, path: path, message: message))
        }

        mutating func warning(_ productID: String?, _ path: String, _ message: String) {
            problems.append(Problem(severity: .warning, productID: productID, path: path, message: message))
        }
    }
}

extension String {
    fileprivate var trimmingWhitespace: Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<max(start, end)]
    }
}
