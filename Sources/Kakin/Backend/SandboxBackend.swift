import AppStoreModels
public import Foundation
import KakinWire

/// The sandbox App Store as the store: its device API over HTTP. Works on Linux and in any test.
///
/// The sandbox has no App Store sheets: ``StoreBackend/showManageSubscriptions(subscriptionGroupID:)``
/// and ``StoreBackend/beginRefundRequest(for:)`` throw ``KakinError/Code/unsupported``. Tests refund
/// and change subscriptions through the sandbox's control API instead
/// (`POST /v1/control/transactions/{id}/refund`, `…/subscriptions/{original}/fail-renewals`). The
/// offer code redemption sheet is played by ``offerCodeSheet``, which stands for the customer who
/// types a code into it (``presentOfferCodeRedeemSheet()``).
public struct SandboxBackend: StoreBackend {
    /// The sandbox's base URL, e.g. `http://127.0.0.1:8081`.
    public let baseURL: URL
    /// The sandbox tester signed in on this "device".
    public let testerID: String
    /// The device's `identifierForVendor`, for the receipt's hash.
    public let deviceID: UUID
    /// How long one long poll of the update stream waits.
    public let pollSeconds: Int
    /// The sandbox token sent as `Authorization: Bearer` with every request, for a sandbox on
    /// another host that asks for one (`kakin serve --host 0.0.0.0 --sandbox-token …`); `nil` sends none.
    public let token: String?
    /// The customer at the offer code redemption sheet: returns the code they type, or `nil` when
    /// they close the sheet. `nil` (the default): the sandbox shows no such sheet.
    public let offerCodeSheet: (@Sendable () async -> String?)?
    /// The country code (ISO 3166-1 alpha-3) of the storefront this "device" reports, as
    /// StoreKit's `Storefront.current?.countryCode` would; `nil` for a device that reports none.
    public let storefront: String?
    let http: TokenHTTP

    /// Creates a backend that acts as tester `testerID` on the sandbox at `baseURL`.
    ///
    /// - Parameters:
    ///   - deviceID: stands in for `identifierForVendor`; pass a fixed value to keep one device across runs.
    ///   - pollSeconds: how long each poll of ``transactionUpdates()`` waits for news.
    ///   - token: the sandbox token, for a sandbox on another host that asks for one.
    ///   - offerCodeSheet: the customer at the offer code redemption sheet (see ``offerCodeSheet``).
    ///   - storefront: the storefront the device reports (see ``storefront``); the United States
    ///     (`USA`), the sandbox catalog's own storefront, by default.
    public init(
        baseURL: URL, testerID: String, deviceID: UUID = UUID(), pollSeconds: Int = 20, token: String? = nil,
        offerCodeSheet: (@Sendable () async -> String?)? = nil, storefront: String? = "USA"
    ) {
        self.storefront = storefront
        self.baseURL = baseURL
        self.testerID = testerID
        self.deviceID = deviceID
        self.pollSeconds = pollSeconds
        self.token = token
        self.offerCodeSheet = offerCodeSheet
        self.http = TokenHTTP(token: token)
    }

    /// The sandbox's HTTP client: every request carries the sandbox token, when there is one.
    struct TokenHTTP: Sendable {
        let token: String?
        let base = JSONHTTP()

        func send(
            _ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil
        ) async throws(KakinError) -> JSONHTTP.Reply {
            var headers = headers
            if let token { headers["Authorization"] = "Bearer \(token)" }
            return try await base.send(method, url, headers: headers, body: body)
        }
    }

    /// `sandbox|<base URL>|<tester>`: one observer per sandbox and tester.
    public var storeIdentifier: String { "sandbox|\(baseURL.absoluteString)|\(testerID)" }

    struct DeviceTransaction: Decodable {
        var jwsRepresentation: String
        var transaction: JWSTransactionDecodedPayload
    }

    struct Transactions: Decodable {
        var transactions: [DeviceTransaction]
        var lastSequence: Int?
    }

    struct SandboxProduct: Decodable {
        var id: String
        var type: ProductType
        var displayName: String
        var description: String
        var price: Decimal
        var displayPrice: String
        var currencyCode: String
        var priceLocaleIdentifier: String
        var isFamilyShareable: Bool?
        var isDownloadable: Bool?
        var subscription: Subscription?
        struct Subscription: Decodable {
            var subscriptionGroupID: String
            var subscriptionPeriod: String
            var groupLevel: Int?
            var introductoryOffer: Offer?
            var promotionalOffers: [Offer]?
            var winBackOffers: [Offer]?
        }
        struct Offer: Decodable {
            var id: String?
            var paymentMode: String
            var period: String
            var periodCount: Int
            var price: Decimal
            var displayPrice: String

            /// The offer as the SDK models it; `nil` for a period the SDK cannot read.
            func offer(_ kind: SubscriptionOffer.Kind) -> SubscriptionOffer? {
                guard let value = SubscriptionPeriod(iso8601: period) else { return nil }
                let mode: SubscriptionOffer.PaymentMode =
                    switch paymentMode {
                    case "free", "freeTrial": .freeTrial
                    case "payUpFront": .payUpFront
                    default: .payAsYouGo
                    }
                return SubscriptionOffer(
                    id: id, kind: kind, price: price, displayPrice: displayPrice, period: value,
                    periodCount: periodCount, paymentMode: mode)
            }
        }
    }

    struct Products: Decodable {
        var products: [SandboxProduct]
        var invalidProductIdentifiers: [Invalid]
        struct Invalid: Decodable {
            var identifier: String
            var reason: String
            var message: String
        }
    }

    struct Payment: Decodable {
        var state: String
        var transaction: DeviceTransaction?
        var error: Failure?
        struct Failure: Decodable {
            var code: Int
            var userCancelled: Bool
        }
    }

    func url(_ path: String, _ query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        return components.url!
    }

    /// The sandbox's error body: `{"error":{"code","message","storeKitCode"}}`.
    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
            var storeKitCode: Int?
        }
        var error: Detail
    }

    /// Turns a failed answer into a ``KakinError`` carrying the sandbox's StoreKit code, if any: a
    /// product the store does not have is ``KakinError/Code/productUnavailable``.
    func check(_ reply: JSONHTTP.Reply) throws(KakinError) {
        guard (200..<300).contains(reply.status) else {
            let detail = try? JSONDecoder().decode(ErrorBody.self, from: reply.body).error
            let storeKitCode = detail?.storeKitCode
            let code: KakinError.Code =
                reply.status >= 500
                ? .network
                : storeKitCode == StoreKitErrorCode.storeProductNotAvailable.rawValue
                    ? .productUnavailable : .storeFailure
            throw KakinError(
                code, "the sandbox answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))",
                storeKitCode: storeKitCode, isRetryable: reply.status >= 500)
        }
    }

    /// ``storefront``: the storefront this device reports.
    public func storefrontCountryCode() async -> String? { storefront }

    /// Asks the sandbox whether the tester may buy (its stand-in for parental restrictions).
    public func canMakePayments() async throws -> Bool {
        let reply = try await http.send("GET", url("v1/device/testers/\(testerID)"))
        try check(reply)
        struct Tester: Decodable { var canMakePayments: Bool }
        return try JSONHTTP.decode(Tester.self, from: reply.body).canMakePayments
    }

    /// Looks the IDs up in the sandbox catalog for the tester; IDs it does not know come back as
    /// ``InvalidProduct`` values with the sandbox's reason.
    public func products(
        for identifiers: [String]
    ) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        let reply = try await http.send(
            "GET",
            url(
                "v1/device/products",
                [.init(name: "tester", value: testerID), .init(name: "ids", value: identifiers.joined(separator: ","))])
        )
        try check(reply)
        let products = try JSONHTTP.decode(Products.self, from: reply.body)
        return (
            products.products.map {
                StoreProduct(
                    id: $0.id, type: $0.type, displayName: $0.displayName, description: $0.description, price: $0.price,
                    displayPrice: $0.displayPrice, currencyCode: $0.currencyCode,
                    priceLocaleIdentifier: $0.priceLocaleIdentifier, isFamilyShareable: $0.isFamilyShareable ?? false,
                    subscriptionPeriod: $0.subscription?.subscriptionPeriod,
                    subscriptionGroupID: $0.subscription?.subscriptionGroupID,
                    isDownloadable: $0.isDownloadable ?? false, subscriptionGroupLevel: $0.subscription?.groupLevel,
                    introductoryOffer: $0.subscription?.introductoryOffer?.offer(.introductory),
                    promotionalOffers: $0.subscription?.promotionalOffers?.compactMap { $0.offer(.promotional) } ?? [],
                    winBackOffers: $0.subscription?.winBackOffers?.compactMap { $0.offer(.winBack) } ?? [])
            },
            products.invalidProductIdentifiers.map {
                InvalidProduct(id: $0.identifier, reason: $0.reason, message: $0.message)
            }
        )
    }

    /// Asks the sandbox to charge the tester. A deferred payment is ``StorePurchaseResult/pending``;
    /// any failure other than a cancel throws ``KakinError`` carrying the sandbox's SKError code.
    public func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult
    {
        try await purchase(productID, options: StorePurchaseOptions(quantity: quantity, appAccountToken: appAccountToken))
    }

    /// Asks the sandbox to charge the tester with StoreKit's purchase options: a promotional offer
    /// goes with its signature (the JWS), an eligibility with its JWS, a win-back offer by ID. The
    /// sandbox checks the signatures as the App Store does.
    public func purchase(_ productID: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
        var body: [String: Any] = ["testerID": testerID, "productID": productID, "quantity": options.quantity]
        if let token = options.appAccountToken { body["appAccountToken"] = token.uuidString }
        if let offer = options.promotionalOffer {
            body["promotionalOfferID"] = offer.offerId ?? ""
            body["promotionalOfferSignature"] = ["compactJWS": offer.jws]
        }
        if let eligibility = options.introductoryOfferEligibility {
            body["introductoryOfferEligibilityJWS"] = eligibility.jws
        }
        if let winBack = options.winBackOfferID { body["winBackOfferID"] = winBack }
        let reply = try await http.send(
            "POST", url("v1/device/payments"), body: try JSONSerialization.data(withJSONObject: body))
        return try paymentResult(reply)
    }

    /// The sandbox's answer to a payment (a purchase or a redeemed offer code) as the store's result.
    func paymentResult(_ reply: JSONHTTP.Reply) throws -> StorePurchaseResult {
        try check(reply)
        let payment = try JSONHTTP.decode(Payment.self, from: reply.body)
        switch payment.state {
        case "purchased":
            guard let device = payment.transaction,
                let transaction = StoreTransaction(jws: device.jwsRepresentation, payload: device.transaction)
            else { throw KakinError(.invalidResponse, "a purchase without its transaction") }
            return .purchased(transaction)
        case "deferred":
            return .pending
        default:
            if payment.error?.userCancelled == true { return .cancelled }
            let code = payment.error?.code ?? 0
            throw KakinError(
                code == StoreKitErrorCode.storeProductNotAvailable.rawValue ? .productUnavailable : .storeFailure,
                "the store failed the payment (SKError \(code))", storeKitCode: code)
        }
    }

    func transactions(_ method: String, _ path: String) async throws -> [StoreTransaction] {
        let reply = try await http.send(method, url(path))
        try check(reply)
        return try JSONHTTP.decode(Transactions.self, from: reply.body).transactions.compactMap {
            StoreTransaction(jws: $0.jwsRepresentation, payload: $0.transaction)
        }
    }

    /// The tester's transactions the sandbox still holds as unfinished.
    public func unfinishedTransactions() async throws -> [StoreTransaction] {
        try await transactions("GET", "v1/device/testers/\(testerID)/transactions/unfinished")
    }

    /// Marks the transaction finished on the sandbox, so it is no longer replayed.
    public func finish(_ transaction: StoreTransaction) async throws {
        let reply = try await http.send(
            "POST", url("v1/device/testers/\(testerID)/transactions/\(transaction.id)/finish"))
        try check(reply)
    }

    /// Asks the sandbox to restore the tester's non-consumables and subscriptions.
    public func restore() async throws -> [StoreTransaction] {
        try await transactions("POST", "v1/device/testers/\(testerID)/restore")
    }

    /// The tester's current entitlements as the sandbox reports them.
    public func currentEntitlements() async throws -> [StoreTransaction] {
        try await transactions("GET", "v1/device/testers/\(testerID)/entitlements")
    }

    /// Long-polls the sandbox for the tester's new transactions. The first poll only finds the
    /// current position, so nothing from before the call is reported; a failed poll is retried after two
    /// seconds until the stream is cancelled.
    public func transactionUpdates() -> AsyncStream<StoreTransaction> {
        let backend = self
        return AsyncStream { continuation in
            let task = Task {
                var after: Int?
                while !Task.isCancelled {
                    do {
                        // The first call only learns where "now" is: earlier transactions are not updates.
                        let timeout = after == nil ? 0 : backend.pollSeconds
                        let reply = try await backend.http.send(
                            "GET",
                            backend.url(
                                "v1/device/testers/\(backend.testerID)/updates",
                                [
                                    .init(name: "after", value: "\(after ?? 0)"),
                                    .init(name: "timeout", value: "\(timeout)"),
                                ]))
                        try backend.check(reply)
                        let page = try JSONHTTP.decode(Transactions.self, from: reply.body)
                        if after != nil {
                            for item in page.transactions {
                                if let transaction = StoreTransaction(
                                    jws: item.jwsRepresentation, payload: item.transaction)
                                {
                                    continuation.yield(transaction)
                                }
                            }
                        }
                        after = page.lastSequence ?? after ?? 0
                    } catch {
                        try? await Task.sleep(for: .seconds(2))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The tester's app transaction as the sandbox signs it (`GET v1/device/testers/{tester}/app-transaction`),
    /// the stand-in for StoreKit's `AppTransaction.shared`: one `appTransactionId` per tester, which
    /// the tester's transactions carry too.
    public func appTransaction() async throws -> String? {
        let reply = try await http.send("GET", url("v1/device/testers/\(testerID)/app-transaction"))
        try check(reply)
        struct AppTransaction: Decodable { var jwsRepresentation: String }
        return try JSONHTTP.decode(AppTransaction.self, from: reply.body).jwsRepresentation
    }

    /// The tester's app receipt for ``deviceID``, base64, as the sandbox builds it.
    public func appReceipt() async throws -> String? {
        let reply = try await http.send(
            "GET", url("v1/device/testers/\(testerID)/receipt", [.init(name: "device", value: deviceID.uuidString)]))
        try check(reply)
        struct Receipt: Decodable { var receipt: String }
        return try JSONHTTP.decode(Receipt.self, from: reply.body).receipt
    }
}
