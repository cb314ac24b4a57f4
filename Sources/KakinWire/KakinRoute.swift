public import Foundation

/// One route of the purchase server's API: its method and path.
///
/// The SDK builds request paths from these values and the server registers its handlers from the
/// same values, so the two cannot drift apart. A route with parameters has a pattern for the
/// router (`v1/customers/:user`) and, for a concrete request, a path whose parameter segments are
/// percent-encoded one by one (`/v1/customers/a%20b`): an app user ID may hold any character.
public struct KakinRoute: Hashable, Sendable, CustomStringConvertible {
    /// One piece of the path.
    public enum Segment: Hashable, Sendable {
        /// A fixed word.
        case literal(String)
        /// A value the request fills in, named for the router.
        case parameter(name: String, value: String)
    }

    /// The HTTP method: `GET`, `POST` or `PUT`.
    public let method: String
    /// The path, piece by piece.
    public let segments: [Segment]

    /// A route from its method and segments.
    public init(_ method: String, _ segments: [Segment]) {
        self.method = method
        self.segments = segments
    }

    /// The router's pattern, without a leading slash: `v1/customers/:user/transactions`.
    public var pattern: String {
        segments.map { segment in
            switch segment {
            case .literal(let word): word
            case .parameter(let name, _): ":" + name
            }
        }.joined(separator: "/")
    }

    /// The request path with every parameter percent-encoded: `/v1/customers/a%20b`.
    public var path: String {
        segments.map { segment in
            switch segment {
            case .literal(let word): "/" + word
            case .parameter(_, let value): "/" + Self.encode(value)
            }
        }.joined()
    }

    /// `METHOD /pattern`, e.g. `GET /v1/customers/:user`, for logs.
    public var description: String { "\(method) /\(pattern)" }

    /// The URL of this route under `baseURL` (which may carry a path prefix), with `query`.
    public func url(relativeTo baseURL: URL, query: [String: String] = [:]) -> URL? {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return nil }
        let prefix = components.percentEncodedPath
        components.percentEncodedPath = (prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix) + path
        components.queryItems =
            query.isEmpty ? nil : query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // `URLQueryItem` leaves `+` alone, which many servers read as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url
    }

    /// Percent-encodes one path segment: only RFC 3986's unreserved characters stay as they are.
    public static func encode(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: unreserved) ?? segment
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

extension KakinRoute {
    /// `POST /v1/transactions`: a signed transaction for a customer (``TransactionSubmission``).
    public static let submitTransaction = KakinRoute("POST", [.literal("v1"), .literal("transactions")])
    /// `POST /v1/receipts`: an app receipt for a customer (``ReceiptSubmission``).
    public static let submitReceipt = KakinRoute("POST", [.literal("v1"), .literal("receipts")])
    /// `POST /v1/notifications/apple`: App Store Server Notifications V2, posted by Apple.
    public static let appleNotification = KakinRoute(
        "POST", [.literal("v1"), .literal("notifications"), .literal("apple")])
    /// `POST /v1/notifications/stripe/{bundleId}`: the events of an app's Stripe account, posted by
    /// Stripe.
    public static func stripeNotification(_ bundleID: String = "") -> KakinRoute {
        KakinRoute(
            "POST",
            [.literal("v1"), .literal("notifications"), .literal("stripe"), .parameter(name: "bundle", value: bundleID)])
    }
    /// `POST /v1/retention/apple`: the App Store's `Get Retention Message` requests, posted by Apple.
    public static let appleRetention = KakinRoute("POST", [.literal("v1"), .literal("retention"), .literal("apple")])
    /// `GET /v1/customers/{user}`: the signed ``CustomerAnswer``.
    public static func customer(_ appUserID: String = "") -> KakinRoute {
        KakinRoute("GET", [.literal("v1"), .literal("customers"), .parameter(name: "user", value: appUserID)])
    }
    /// `GET /v1/customers/{user}/transactions`: a signed ``TransactionPage``.
    public static func customerTransactions(_ appUserID: String = "") -> KakinRoute {
        KakinRoute(
            "GET",
            [.literal("v1"), .literal("customers"), .parameter(name: "user", value: appUserID), .literal("transactions")])
    }
    /// `POST /v1/customers/{user}/balances/{currency}/spend` (secret key): a ``SpendRequest``.
    public static func spend(_ appUserID: String = "", currency: String = "") -> KakinRoute {
        KakinRoute(
            "POST",
            [
                .literal("v1"), .literal("customers"), .parameter(name: "user", value: appUserID),
                .literal("balances"), .parameter(name: "currency", value: currency), .literal("spend"),
            ])
    }
    /// `POST /v1/customers/{user}/offers/sign`: an ``OfferSigningRequest``, answered with a ``SignedOffer``.
    public static func signOffer(_ appUserID: String = "") -> KakinRoute {
        KakinRoute(
            "POST",
            [
                .literal("v1"), .literal("customers"), .parameter(name: "user", value: appUserID), .literal("offers"),
                .literal("sign"),
            ])
    }
    /// `POST /v1/customers/{user}/app-transaction`: an ``AppTransactionSubmission``, answered with a
    /// ``LinkedAppTransaction``.
    public static func linkAppTransaction(_ appUserID: String = "") -> KakinRoute {
        KakinRoute(
            "POST",
            [.literal("v1"), .literal("customers"), .parameter(name: "user", value: appUserID), .literal("app-transaction")])
    }
    /// `POST /v1/customers/{anonymous user}/alias`: a ``CustomerAliasRequest``, answered with the
    /// identified customer's signed ``CustomerAnswer``.
    public static func aliasCustomer(_ anonymousID: String = "") -> KakinRoute {
        KakinRoute(
            "POST",
            [.literal("v1"), .literal("customers"), .parameter(name: "user", value: anonymousID), .literal("alias")])
    }
    /// `GET /v1/catalog`: the ``CatalogAnswer``.
    public static let catalog = KakinRoute("GET", [.literal("v1"), .literal("catalog")])
    /// `GET /v1/content/{product}`: a product's hosted content package (ranged).
    public static func content(_ productID: String = "") -> KakinRoute {
        KakinRoute("GET", [.literal("v1"), .literal("content"), .parameter(name: "product", value: productID)])
    }
    /// `PUT /v1/content/{product}` (secret key): uploads a content package.
    public static func uploadContent(_ productID: String = "") -> KakinRoute {
        KakinRoute("PUT", [.literal("v1"), .literal("content"), .parameter(name: "product", value: productID)])
    }
    /// `GET /v1/server-key`: the PEM public key customer answers are signed with.
    public static let serverKey = KakinRoute("GET", [.literal("v1"), .literal("server-key")])
    /// `POST /v1/checkout/{bundleId}/links`: a ``CheckoutLinkRequest``, answered with a
    /// ``CheckoutLinkAnswer``: a signed link to the web checkout page.
    public static func checkoutLinks(_ bundleID: String = "") -> KakinRoute {
        KakinRoute(
            "POST", [.literal("v1"), .literal("checkout"), .parameter(name: "bundle", value: bundleID), .literal("links")])
    }
    /// `GET /checkout/{bundleId}?appUserId&productId&returnUrl&expires&signature`: the web checkout
    /// page of a signed link (HTML, for the customer's browser).
    public static func checkoutPage(_ bundleID: String = "") -> KakinRoute {
        KakinRoute("GET", [.literal("checkout"), .parameter(name: "bundle", value: bundleID)])
    }
    /// `POST /checkout/{bundleId}/pay`: the checkout page's payment, the signed link's fields in
    /// its body.
    public static func checkoutPay(_ bundleID: String = "") -> KakinRoute {
        KakinRoute("POST", [.literal("checkout"), .parameter(name: "bundle", value: bundleID), .literal("pay")])
    }
}

/// Header names of the API.
public enum KakinHeader {
    /// The app's publishable key, sent by the SDK.
    public static let publishableKey = "X-Kakin-Key"
    /// On customer answers: base64 of the server's ES256 signature (raw R‖S) over the exact body.
    /// On webhooks: `t=<unix seconds>,v1=<hex HMAC-SHA256>`.
    public static let signature = "X-Kakin-Signature"
    /// The request's ID, echoed on every answer and written to the server's log line.
    public static let requestID = "X-Request-Id"
    /// A customer token: a short-lived token the app's own backend signs for one app user ID
    /// (an HS256 JWT whose `sub` is the app user ID and `aud` the bundle ID). An app that
    /// requires customer tokens answers 401 to a publishable-key request that names an identified
    /// customer without a valid token for that customer.
    public static let customerToken = "X-Kakin-Customer-Token"
}

/// Query parameter names of the API.
public enum KakinQuery {
    /// The app the request is about.
    public static let bundleID = "bundleId"
    /// The customer, where the path does not name it.
    public static let appUserID = "appUserId"
    /// A value the client makes up; the signed answer echoes it, so an old answer cannot be replayed.
    public static let nonce = "nonce"
    /// How many of the newest transactions a customer answer carries (0 to 100, default 10).
    public static let transactions = "transactions"
    /// `signedTransaction`: answers carry each transaction's JWS.
    public static let include = "include"
    /// The page size of a transaction page (1 to 100).
    public static let limit = "limit"
    /// The ``TransactionPage/nextCursor`` of the previous page.
    public static let cursor = "cursor"
    /// The catalog's language (`ja_JP`).
    public static let locale = "locale"
}
