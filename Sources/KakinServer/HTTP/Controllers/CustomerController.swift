import AppStoreModels
import Foundation
import KakinLedger
import Hummingbird
import KakinHTTP
import KakinWire

/// The routes about one customer: the customer's answer and transaction pages, offer signatures,
/// app downloads and the alias an anonymous customer becomes at sign-in (publishable key), and
/// spending currency (secret key). A path that names an anonymous customer who became an
/// identified one is about the identified customer.
struct CustomerController: RouteController {
    let service: PurchaseService
    let reader: RequestReader
    let answers: CustomerAnswerSigner

    func addRoutes(to routes: inout RouteTable) {
        routes.on(.customer()) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            let asked = try CustomerAnswerSigner.AnswerQuery(request, caller: caller, app: app)
            let user = try await caller.customer(
                try RequestReader.pathParameter(context, "user"), of: app, request: request, service: service)
            return try await answers.answer(asked, bundleID: app.bundleID, appUserID: user)
        }
        routes.on(.customerTransactions()) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            let includeJWS = RequestReader.includesJWS(request.uri.queryParameters)
            if includeJWS { try caller.checkMayReadSignedTransactions(of: app) }
            let user = try await caller.customer(
                try RequestReader.pathParameter(context, "user"), of: app, request: request, service: service)
            return try await transactionPage(request, app: app, user: user, includeJWS: includeJWS)
        }
        routes.on(.signOffer()) { request, context in
            let (app, user, body) = try await input(OfferSigningRequest.self, \.bundleId, request, context)
            var signing = body
            signing.bundleId = app.bundleID
            return JSONBody.response(try await service.signOffer(signing, appUserID: user))
        }
        routes.on(.linkAppTransaction()) { request, context in
            let (app, user, body) = try await input(AppTransactionSubmission.self, \.bundleId, request, context)
            let linked = try await service.linkAppTransaction(
                body.signedAppTransaction, bundleID: app.bundleID, appUserID: user)
            return JSONBody.response(LinkedAppTransaction(appTransactionId: linked.appTransactionID ?? "", appUserId: user))
        }
        routes.on(.aliasCustomer()) { request, context in
            let (app, anonymous, body) = try await input(
                CustomerAliasRequest.self, \.bundleId, request, context, followingAlias: false)
            // The caller speaks for the customer the anonymous one becomes.
            try KakinServerHTTP.Caller.checkCustomerID(body.appUserId)
            let caller = try context.caller(secret: false)
            try caller.authorize(body.appUserId, of: app, request: request, now: service.realNow())
            let asked = try CustomerAnswerSigner.AnswerQuery(request, caller: caller, app: app)
            try await service.alias(bundleID: app.bundleID, anonymousID: anonymous, to: body.appUserId)
            return try await answers.answer(asked, bundleID: app.bundleID, appUserID: body.appUserId)
        }
        routes.on(.spend()) { request, context in
            let (app, user, body) = try await input(SpendRequest.self, \.bundleId, request, context, secret: true)
            let currency = try RequestReader.pathParameter(context, "currency")
            return try await spend(body, app: app, user: user, currency: currency)
        }
    }

    /// The input of a customer route whose body names the app: the caller's key first, then the
    /// body, then the app it names, then the customer of the path (the identified customer it
    /// became, for an anonymous ID that did, unless `followingAlias` is false), whom the caller
    /// must show it may act for (``KakinServerHTTP/Caller/customer(_:of:request:service:)``).
    private func input<Body: Decodable>(
        _ type: Body.Type, _ bundleID: KeyPath<Body, String>, _ request: Request, _ context: KakinRequestContext,
        secret: Bool = false, followingAlias: Bool = true
    ) async throws -> (app: AppConfiguration, user: String, body: Body) {
        let caller = try context.caller(secret: secret)
        let user = try RequestReader.pathParameter(context, "user")
        let body = try await reader.decode(Body.self, from: request)
        let app = try caller.app(body[keyPath: bundleID], in: service)
        guard followingAlias else {
            try KakinServerHTTP.Caller.checkCustomerID(user)
            return (app, user, body)
        }
        return (app, try await caller.customer(user, of: app, request: request, service: service), body)
    }

    /// A signed page of the customer's transactions, newest first (`?limit=`, `?cursor=`).
    private func transactionPage(
        _ request: Request, app: AppConfiguration, user: String, includeJWS: Bool
    ) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = try RequestReader.count(query.get(KakinQuery.limit), name: "limit", default: 50)
        var cursor: TransactionCursor?
        if let token = query.get(KakinQuery.cursor) {
            guard let parsed = TransactionCursor(token: token) else {
                throw ServerError(.invalidRequest, "cursor is not a cursor this server gave")
            }
            cursor = parsed
        }
        let rows = try await service.transactions(
            bundleID: app.bundleID, appUserID: user, limit: limit + 1, after: cursor)
        let page = Array(rows.prefix(limit))
        let answer = TransactionPage(
            nonce: query.get(KakinQuery.nonce), signedDate: epochMilliseconds(service.now()), bundleId: app.bundleID,
            appUserId: user, transactions: page.map { CustomerAnswer.Transaction(recorded: $0, includeJWS: includeJWS) },
            nextCursor: rows.count > limit ? page.last.map { TransactionCursor(after: $0).token } : nil)
        return answers.signed(answer.jsonBytes())
    }

    /// Spends `body.amount` of `currency` once per idempotency key: 200 with the balance, 422
    /// `insufficientBalance` when the balance is smaller.
    private func spend(
        _ body: SpendRequest, app: AppConfiguration, user: String, currency: String
    ) async throws -> Response {
        let outcome = try await service.spend(
            bundleID: app.bundleID, appUserID: user, currency: currency, amount: body.amount,
            idempotencyKey: body.idempotencyKey)
        switch outcome {
        case .spent(let balance): return JSONBody.response(SpendAnswer(status: "spent", balance: balance))
        case .alreadySpent(let balance): return JSONBody.response(SpendAnswer(status: "alreadySpent", balance: balance))
        case .insufficientBalance(let balance):
            throw ServerError(.insufficientBalance, "the balance is \(balance), less than \(body.amount)")
        }
    }
}
