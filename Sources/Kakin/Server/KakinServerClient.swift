import AppStoreModels
public import Crypto
public import Foundation
import KakinCore
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
    /// The customer tokens given by the app's provider, shared by every copy of this client.
    let tokens: CustomerTokens?

    /// A client of the server at `baseURL` for the app `bundleID`.
    ///
    /// - Parameters:
    ///   - serverKey: the server's public key; pin it in production. Answers whose signature does
    ///     not verify are refused. `nil` skips the check (development only).
    ///   - transport: how requests are sent; `URLSession` by default.
    ///   - customerToken: where customer tokens come from, for an app whose server requires them
    ///     (see ``CustomerTokenProvider``): every request that names an identified customer then
    ///     carries one for that customer (`X-Kakin-Customer-Token`). Each token is kept until a
    ///     minute before it expires; a token the server refuses (401, cause `customerToken…`) is
    ///     replaced by a fresh one and the request sent once more. `nil` sends none.
    ///   - now: the clock tokens expire by.
    public init(
        baseURL: URL, bundleID: String, publishableKey: String, serverKey: P256.Signing.PublicKey?,
        transport: any KakinTransport = URLSessionTransport(), customerToken: CustomerTokenProvider? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.baseURL = baseURL
        self.bundleID = bundleID
        self.publishableKey = publishableKey
        self.serverKey = serverKey
        self.transport = transport
        self.tokens = customerToken.map { CustomerTokens(provider: $0, now: now) }
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
    ///
    /// - Parameters:
    ///   - signedAppTransaction: the device's app transaction (``StoreBackend/appTransaction()``),
    ///     sent with a transaction the app did not just buy (a restore, a launch replay, an update):
    ///     the proof that this device is signed in to the Apple Account that bought it, which the
    ///     server asks for before it moves a purchase another customer owns (under the transfer
    ///     policy `transferToNewUser`). Without it such an upload is refused with
    ///     ``KakinError/Code/purchasedByAnotherAccount``.
    ///   - authorizedAs: the identified customer whose customer token goes with the request:
    ///     `appUserID` by default; for a transaction an anonymous `appUserID` queued before it
    ///     logged in, the identified customer it became (the server gives the purchase to that
    ///     customer, and asks for that customer's token).
    public func deliver(
        _ transaction: StoreTransaction, appUserID: String, signedAppTransaction: String? = nil,
        authorizedAs: String? = nil
    ) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let body = JSONHTTP.encode(
            TransactionSubmission(
                bundleId: bundleID, appUserId: appUserID, signedTransaction: transaction.jwsRepresentation,
                signedAppTransaction: signedAppTransaction))
        // The SDK reads entitlements and balances only: no transaction list in the answer.
        let reply = try await send(
            .submitTransaction, [KakinQuery.nonce: nonce, KakinQuery.transactions: "0"], body: body,
            for: authorizedAs ?? appUserID)
        return try customer(from: reply, nonce: nonce)
    }

    /// Reads the customer.
    public func customer(appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let reply = try await send(
            .customer(appUserID),
            [KakinQuery.bundleID: bundleID, KakinQuery.nonce: nonce, KakinQuery.transactions: "0"], for: appUserID)
        return try customer(from: reply, nonce: nonce)
    }

    /// Makes the anonymous customer `anonymousID` (`$kakin_anon_…`) the identified customer
    /// `appUserID` (`POST /v1/customers/{anonymous user}/alias`): the server moves the anonymous
    /// customer's purchases and balances to `appUserID` in one database transaction, and answers
    /// with the identified customer, signed. Asking again changes nothing and answers the same.
    /// Throws ``KakinError`` with the server's code: `invalidRequest` when `appUserID` is empty or
    /// anonymous, `conflict` when `anonymousID` became another customer before. The request
    /// carries `appUserID`'s customer token: the anonymous customer becomes that user.
    public func logIn(anonymousID: String, as appUserID: String) async throws -> CustomerInfo {
        let nonce = UUID().uuidString
        let body = JSONHTTP.encode(CustomerAliasRequest(bundleId: bundleID, appUserId: appUserID))
        let reply = try await send(
            .aliasCustomer(anonymousID), [KakinQuery.nonce: nonce, KakinQuery.transactions: "0"], body: body,
            for: appUserID)
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
        let reply = try await send(.signOffer(appUserID), [:], body: body, for: appUserID)
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
        let reply = try await send(.linkAppTransaction(appUserID), [:], body: body, for: appUserID)
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

    /// The URL of a product's hosted content for a customer, and the headers to send with it: the
    /// publishable key and, for an identified customer of an app with a token provider, the
    /// customer's token.
    ///
    /// - Throws: ``KakinError/Code/unauthorized`` (retryable) when the token provider fails.
    public func contentRequest(
        productID: String, appUserID: String
    ) async throws(KakinError) -> (url: URL, headers: [String: String]) {
        var headers = [KakinHeader.publishableKey: publishableKey]
        if let token = try await token(for: appUserID) { headers[KakinHeader.customerToken] = token }
        return (url(.content(productID), [KakinQuery.bundleID: bundleID, KakinQuery.appUserID: appUserID]), headers)
    }

    /// The URL of `route` under ``baseURL``, each path parameter percent-encoded on its own (an
    /// app user ID may hold spaces, slashes or any other character).
    func url(_ route: KakinRoute, _ query: [String: String]) -> URL {
        route.url(relativeTo: baseURL, query: query) ?? baseURL
    }

    /// Sends a request; with `customer` an identified customer and a token provider configured,
    /// with that customer's token, and once more with a fresh token when the server refuses it.
    func send(
        _ route: KakinRoute, _ query: [String: String], body: Data? = nil, for customer: String? = nil
    ) async throws(KakinError) -> KakinHTTPReply {
        var request = KakinHTTPRequest(
            method: route.method, url: url(route, query), headers: [KakinHeader.publishableKey: publishableKey],
            body: body)
        if body != nil { request.headers["Content-Type"] = "application/json" }
        guard let customer, let tokens, let token = try await token(for: customer) else {
            return try await transport.send(request)
        }
        request.headers[KakinHeader.customerToken] = token
        let reply = try await transport.send(request)
        guard Self.refusesCustomerToken(reply) else { return reply }
        // Revoked, expired early, or minted before the secret changed: one fresh token, one more try.
        await tokens.discard(token, of: customer)
        guard let fresh = try await self.token(for: customer) else { return reply }
        request.headers[KakinHeader.customerToken] = fresh
        return try await transport.send(request)
    }

    /// The customer token for `appUserID`, or `nil` for an anonymous customer or without a provider.
    private func token(for appUserID: String) async throws(KakinError) -> String? {
        guard let tokens, !AnonymousAppUserID.isAnonymous(appUserID) else { return nil }
        return try await tokens.token(for: appUserID)
    }

    /// The server's error detail in a reply, if it has one.
    static func detail(of reply: KakinHTTPReply) -> ErrorAnswer.Detail? {
        try? KakinJSON.decoder().decode(ErrorAnswer.self, from: reply.body).error
    }

    /// Whether `reply` is a 401 about the customer token (cause `customerToken…`), as opposed to
    /// one about the key.
    static func refusesCustomerToken(_ reply: KakinHTTPReply) -> Bool {
        reply.status == 401 && detail(of: reply)?.cause?.hasPrefix("customerToken") == true
    }

    /// Turns a failure status into a typed error: 5xx, 429 and 408 are passing (retryable); a 401
    /// about the customer token is ``KakinError/Code/unauthorized`` (retryable: a later token may
    /// pass); a 409 `purchasedByAnotherAccount` is ``KakinError/Code/purchasedByAnotherAccount``;
    /// every other failure is the server refusing for good, with the server's own code and cause.
    static func check(_ reply: KakinHTTPReply) throws(KakinError) {
        guard !(200..<300).contains(reply.status) else { return }
        let detail = detail(of: reply)
        let message = detail?.message ?? String(decoding: reply.body.prefix(500), as: UTF8.self)
        if refusesCustomerToken(reply) {
            throw KakinError(
                .unauthorized, "the server refused the customer token (\(detail?.cause ?? "")): \(message)",
                isRetryable: true, serverCode: detail?.code, cause: detail?.cause)
        }
        if reply.status == 409, detail?.cause == "purchasedByAnotherAccount" {
            throw KakinError(
                .purchasedByAnotherAccount,
                "this purchase belongs to another customer, and nothing shows that this device is signed in to the "
                    + "Apple Account that bought it: restore purchases on a device signed in to that Apple Account "
                    + "(the server said: \(message))",
                isRetryable: false, serverCode: detail?.code, cause: detail?.cause)
        }
        let retryable = reply.status >= 500 || reply.status == 429 || reply.status == 408
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
