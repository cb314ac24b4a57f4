import AppStoreModels
public import Crypto
public import Foundation
public import KakinWire

/// Talks to KakinServer: delivers transactions (idempotently, keyed by transaction ID) and reads
/// the customer, checking the server's signature and the nonce so a tampered or replayed answer
/// is refused.
///
/// Routes, header names and answer types come from `KakinWire`, the contract the server is built
/// from too.
public struct KakinServerClient: Sendable {
    /// The server's base URL; it may include a path prefix.
    public let baseURL: URL
    /// The app's bundle ID: sent with every request and checked in every customer answer.
    public let bundleID: String
    /// The app's publishable key.
    public let publishableKey: String
    /// The server's public key (from `/v1/server-key`); answers are checked against it when set.
    public let serverKey: P256.Signing.PublicKey?
    /// How requests reach the server.
    public let transport: any KakinTransport

    /// A client of the server at `baseURL` for the app `bundleID`.
    ///
    /// - Parameters:
    ///   - serverKey: the server's public key; pin it in production. Answers whose signature does
    ///     not verify are refused. `nil` skips the check (development only).
    ///   - transport: how requests are sent; `URLSession` by default.
    public init(
        baseURL: URL, bundleID: String, publishableKey: String, serverKey: P256.Signing.PublicKey?,
        transport: any KakinTransport = URLSessionTransport()
    ) {
        self.baseURL = baseURL
        self.bundleID = bundleID
        self.publishableKey = publishableKey
        self.serverKey = serverKey
        self.transport = transport
    }

    /// Fetches the server's public key (trust on first use; pin it in production).
    public static func fetchServerKey(
        baseURL: URL, transport: any KakinTransport = URLSessionTransport()
    ) async throws -> P256.Signing.PublicKey {
        guard let url = KakinRoute.serverKey.url(relativeTo: baseURL) else {
            throw KakinError(.notConfigured, "\(baseURL) is not a base URL")
        }
        let reply = try await transport.send(KakinHTTPRequest(method: "GET", url: url))
        guard reply.status == 200,
            let key = try? P256.Signing.PublicKey(pemRepresentation: String(decoding: reply.body, as: UTF8.self))
        else { throw KakinError(.invalidResponse, "the server key cannot be read") }
        return key
    }

    /// Posts a signed transaction for `appUserID`; the server records it once and answers the customer.
    public func deliver(_ transaction: StoreTransaction, appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let body = JSONHTTP.encode(
            TransactionSubmission(
                bundleId: bundleID, appUserId: appUserID, signedTransaction: transaction.jwsRepresentation))
        // The SDK reads entitlements and balances only: no transaction list in the answer.
        let reply = try await send(
            .submitTransaction, [KakinQuery.nonce: nonce, KakinQuery.transactions: "0"], body: body)
        return try customer(from: reply, nonce: nonce)
    }

    /// Reads the customer.
    public func customer(appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let reply = try await send(
            .customer(appUserID),
            [KakinQuery.bundleID: bundleID, KakinQuery.nonce: nonce, KakinQuery.transactions: "0"])
        return try customer(from: reply, nonce: nonce)
    }

    /// Makes the anonymous customer `anonymousID` (`$kakin_anon_…`) the identified customer
    /// `appUserID` (`POST /v1/customers/{anonymous user}/alias`): the server moves the anonymous
    /// customer's purchases and balances to `appUserID` in one database transaction, and answers
    /// with the identified customer, signed. Asking again changes nothing and answers the same.
    /// Throws ``KakinError`` with the server's code: `invalidRequest` when `appUserID` is empty or
    /// anonymous, `conflict` when `anonymousID` became another customer before.
    public func logIn(anonymousID: String, as appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let body = JSONHTTP.encode(CustomerAliasRequest(bundleId: bundleID, appUserId: appUserID))
        let reply = try await send(
            .aliasCustomer(anonymousID), [KakinQuery.nonce: nonce, KakinQuery.transactions: "0"], body: body)
        let customer = try customer(from: reply, nonce: nonce)
        guard customer.appUserID == appUserID else {
            throw KakinError(.tamperedResponse, "the answer is for another customer")
        }
        return customer
    }

    /// Asks the server to sign an offer for the customer (`POST /v1/customers/{id}/offers/sign`).
    /// Throws ``KakinError`` with the server's code: `notEntitled` when the offer's rule refuses
    /// the customer, `notFound` for an offer the server's catalog lacks.
    public func signOffer(
        _ kind: OfferSigningRequest.Kind, productID: String, offerID: String? = nil, appAccountToken: UUID? = nil,
        transactionID: String? = nil, appUserID: String
    ) async throws -> SignedOffer {
        let body = JSONHTTP.encode(
            OfferSigningRequest(
                bundleId: bundleID, productId: productID, kind: kind, offerId: offerID,
                appAccountToken: appAccountToken?.uuidString.lowercased(), transactionId: transactionID))
        let reply = try await send(.signOffer(appUserID), [:], body: body)
        try Self.check(reply)
        return try JSONHTTP.decode(SignedOffer.self, from: reply.body)
    }

    /// Links the app transaction of this install (`AppTransaction.shared`'s JWS) to the customer
    /// (`POST /v1/customers/{id}/app-transaction`): purchases of this download that reach the
    /// server without an owner, such as those Apple notifies before the app uploads them, are
    /// given to this customer. Returns the download's `appTransactionId`.
    @discardableResult
    public func linkAppTransaction(_ jws: String, appUserID: String) async throws -> String {
        let body = JSONHTTP.encode(AppTransactionSubmission(bundleId: bundleID, signedAppTransaction: jws))
        let reply = try await send(.linkAppTransaction(appUserID), [:], body: body)
        try Self.check(reply)
        return try JSONHTTP.decode(LinkedAppTransaction.self, from: reply.body).appTransactionId
    }

    /// The server's catalog (`GET /v1/catalog`): products and what each grants.
    public func catalog(locale: String = "en_US") async throws -> CatalogAnswer {
        let reply = try await send(.catalog, [KakinQuery.bundleID: bundleID, KakinQuery.locale: locale])
        try Self.check(reply)
        return try JSONHTTP.decode(CatalogAnswer.self, from: reply.body)
    }

    /// The product IDs of the server's catalog.
    public func catalogProductIDs(locale: String = "en_US") async throws -> [String] {
        try await catalog(locale: locale).products.map(\.productId)
    }

    /// The URL of a product's hosted content for a customer, and the headers to send with it.
    public func contentRequest(productID: String, appUserID: String) -> (url: URL, headers: [String: String]) {
        (
            url(.content(productID), [KakinQuery.bundleID: bundleID, KakinQuery.appUserID: appUserID]),
            [KakinHeader.publishableKey: publishableKey]
        )
    }

    /// The URL of `route` under ``baseURL``, each path parameter percent-encoded on its own (an
    /// app user ID may hold spaces, slashes or any other character).
    func url(_ route: KakinRoute, _ query: [String: String]) -> URL {
        route.url(relativeTo: baseURL, query: query) ?? baseURL
    }

    private func send(_ route: KakinRoute, _ query: [String: String], body: Data? = nil) async throws(KakinError)
        -> KakinHTTPReply
    {
        var headers = [KakinHeader.publishableKey: publishableKey]
        if body != nil { headers["Content-Type"] = "application/json" }
        return try await transport.send(
            KakinHTTPRequest(method: route.method, url: url(route, query), headers: headers, body: body))
    }

    /// Turns a failure status into a typed error: 5xx, 429 and 408 are passing (retryable), every
    /// other failure is the server refusing for good, with the server's own code and cause.
    static func check(_ reply: KakinHTTPReply) throws(KakinError) {
        guard !(200..<300).contains(reply.status) else { return }
        let detail = try? KakinJSON.decoder().decode(ErrorAnswer.self, from: reply.body).error
        let retryable = reply.status >= 500 || reply.status == 429 || reply.status == 408
        let message = detail?.message ?? String(decoding: reply.body.prefix(500), as: UTF8.self)
        throw KakinError(
            retryable ? .network : .serverRejected, "the server answered \(reply.status): \(message)",
            isRetryable: retryable, serverCode: detail?.code, cause: detail?.cause)
    }

    func customer(from reply: KakinHTTPReply, nonce: String) throws(KakinError) -> CustomerInfo {
        try Self.check(reply)
        if let serverKey {
            guard let signature = reply.headers[KakinHeader.signature.lowercased()].flatMap({ Data(base64Encoded: $0) }),
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                serverKey.isValidSignature(parsed, for: reply.body)
            else { throw KakinError(.tamperedResponse, "the server's answer is not signed by the server key") }
        }
        let answer = try JSONHTTP.decode(SignedCustomerAnswer.self, from: reply.body)
        guard answer.nonce == nonce else { throw KakinError(.tamperedResponse, "the answer is for another request") }
        guard answer.customer.bundleId == bundleID else {
            throw KakinError(.tamperedResponse, "the answer is for another app")
        }
        return CustomerInfo(answer.customer)
    }
}
