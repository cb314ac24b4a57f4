import AppStoreModels
public import Crypto
public import Foundation

/// What the purchase server says a customer has, from its signed answer.
public struct CustomerInfo: Codable, Hashable, Sendable {
    /// One access right.
    public struct Entitlement: Codable, Hashable, Sendable {
        public var identifier: String
        public var productID: String
        public var isActive: Bool
        public var expiresDate: Date?
        public var revocationDate: Date?
        public var transactionID: String

        enum CodingKeys: String, CodingKey {
            case identifier, productID = "productId", isActive, expiresDate, revocationDate,
                transactionID = "transactionId"
        }
    }

    public var appUserID: String
    public var entitlements: [Entitlement]
    /// Balances by currency, e.g. `["points": 100]`.
    public var balances: [String: Int64]

    enum CodingKeys: String, CodingKey {
        case appUserID = "appUserId", entitlements, balances
    }

    /// Whether `identifier` is active.
    public func isEntitled(to identifier: String) -> Bool {
        entitlements.contains { $0.identifier == identifier && $0.isActive }
    }
}

/// Talks to KakinServer: delivers transactions (idempotently, keyed by transaction ID) and reads
/// the customer, checking the server's signature and the nonce so a tampered or replayed answer
/// is refused.
public struct KakinServerClient: Sendable {
    public let baseURL: URL
    public let bundleID: String
    /// The app's publishable key.
    public let publishableKey: String
    /// The server's public key (from `/v1/server-key`); answers are checked against it when set.
    public let serverKey: P256.Signing.PublicKey?
    let http = JSONHTTP()

    public init(baseURL: URL, bundleID: String, publishableKey: String, serverKey: P256.Signing.PublicKey?) {
        self.baseURL = baseURL
        self.bundleID = bundleID
        self.publishableKey = publishableKey
        self.serverKey = serverKey
    }

    /// Fetches the server's public key (trust on first use; pin it in production).
    public static func fetchServerKey(baseURL: URL) async throws -> P256.Signing.PublicKey {
        let reply = try await JSONHTTP().send("GET", baseURL.appendingPathComponent("v1/server-key"))
        guard reply.status == 200,
            let key = try? P256.Signing.PublicKey(pemRepresentation: String(decoding: reply.body, as: UTF8.self))
        else { throw KakinError(.invalidResponse, "the server key cannot be read") }
        return key
    }

    /// Posts a signed transaction for `appUserID`; the server records it once and answers the customer.
    public func deliver(_ transaction: StoreTransaction, appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let body = try JSONSerialization.data(withJSONObject: [
            "bundleId": bundleID, "appUserId": appUserID, "signedTransaction": transaction.jwsRepresentation,
        ])
        let reply = try await http.send(
            "POST", url(["v1", "transactions"], ["nonce": nonce]), headers: ["X-Kakin-Key": publishableKey], body: body)
        return try customer(from: reply, nonce: nonce)
    }

    /// Reads the customer.
    public func customer(appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let reply = try await http.send(
            "GET",
            url(["v1", "customers", appUserID], ["bundleId": bundleID, "nonce": nonce]),
            headers: ["X-Kakin-Key": publishableKey])
        return try customer(from: reply, nonce: nonce)
    }

    /// The product IDs of the server's catalog (`GET /v1/catalog`).
    public func catalogProductIDs(locale: String = "en_US") async throws -> [String] {
        let reply = try await http.send(
            "GET", url(["v1", "catalog"], ["bundleId": bundleID, "locale": locale]),
            headers: ["X-Kakin-Key": publishableKey]
        )
        guard reply.status == 200 else { throw KakinError(.serverRejected, "the catalog answered \(reply.status)") }
        struct Catalog: Decodable {
            struct Product: Decodable { var productId: String }
            var products: [Product]
        }
        return try JSONHTTP.decode(Catalog.self, from: reply.body).products.map(\.productId)
    }

    /// The URL of a product's hosted content for a customer, and the headers to send with it.
    public func contentRequest(productID: String, appUserID: String) -> (url: URL, headers: [String: String]) {
        (
            url(["v1", "content", productID], ["bundleId": bundleID, "appUserId": appUserID]),
            ["X-Kakin-Key": publishableKey]
        )
    }

    /// The URL of `segments` under ``baseURL``, each segment percent-encoded on its own (an app
    /// user ID may hold spaces, slashes or any other character).
    func url(_ segments: [String], _ query: [String: String]) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        let base =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = base + segments.map { "/" + Self.encodeSegment($0) }.joined()
        components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        return components.url!
    }

    /// Percent-encodes one path segment: only unreserved characters stay as they are.
    static func encodeSegment(_ segment: String) -> String {
        let allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }

    struct SignedAnswer: Decodable {
        var nonce: String?
        var customer: CustomerInfo
    }

    func customer(from reply: JSONHTTP.Reply, nonce: String) throws(KakinError) -> CustomerInfo {
        guard (200..<300).contains(reply.status) else {
            let retryable = reply.status >= 500 || reply.status == 429
            throw KakinError(
                retryable ? .network : .serverRejected,
                "the server answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))",
                isRetryable: retryable)
        }
        if let serverKey {
            guard let signature = reply.headers["x-kakin-signature"].flatMap({ Data(base64Encoded: $0) }),
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                serverKey.isValidSignature(parsed, for: reply.body)
            else { throw KakinError(.tamperedResponse, "the server's answer is not signed by the server key") }
        }
        let answer = try JSONHTTP.decode(SignedAnswer.self, from: reply.body)
        guard answer.nonce == nonce else { throw KakinError(.tamperedResponse, "the answer is for another request") }
        return answer.customer
    }
}
