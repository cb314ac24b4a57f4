import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import KakinHTTP
import KakinWire

extension KakinServerHTTP {
    /// How many transactions a customer answer carries unless `?transactions=` says otherwise.
    static let defaultRecentTransactions = 10
    /// The most a customer answer or a page carries.
    static let maxPageSize = 100

    func addPurchaseRoutes(to router: Router<KakinRequestContext>, table: inout RouteTable) {
        table.on(.submitTransaction, router) { request, context in
            let caller = try context.caller(secret: false)
            let body = try await decodeSubmission(from: request)
            let app = try caller.app(body.bundleId, in: service)
            try Self.checkUserID(body.appUserId)
            let asked = try AnswerQuery(request)
            let (_, summary, entitlements) = try await service.submit(
                body.signedTransaction, bundleID: app.bundleID, appUserID: body.appUserId,
                recent: asked.recent, withJWS: asked.withJWS)
            return signedCustomerAnswer(asked, summary: summary, entitlements: entitlements)
        }
        table.on(.submitReceipt, router) { request, context in
            let caller = try context.caller(secret: false)
            let body = try await decode(ReceiptSubmission.self, from: request)
            let app = try caller.app(body.bundleId, in: service)
            try Self.checkUserID(body.appUserId)
            _ = try await service.submitReceipt(body.receipt, bundleID: app.bundleID, appUserID: body.appUserId)
            return try await customerAnswer(request, bundleID: app.bundleID, appUserID: body.appUserId)
        }
        // Apple posts here without a key: the signature is the authentication.
        table.on(.appleNotification, router) { request, _ in
            let body = try await decode(ResponseBodyV2.self, from: request)
            switch try await service.receiveNotification(body) {
            case .processed(let type):
                return Self.json(NotificationAnswer(status: "processed", notificationType: type.rawValue))
            case .duplicate:
                return Self.json(NotificationAnswer(status: "duplicate"))
            }
        }
    }

    func addCustomerRoutes(to router: Router<KakinRequestContext>, table: inout RouteTable) {
        table.on(.customer(), router) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try Self.bundleID(request), in: service)
            let user = try Self.pathParameter(context, "user")
            try Self.checkUserID(user)
            return try await customerAnswer(request, bundleID: app.bundleID, appUserID: user)
        }
        table.on(.customerTransactions(), router) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try Self.bundleID(request), in: service)
            let user = try Self.pathParameter(context, "user")
            try Self.checkUserID(user)
            let query = request.uri.queryParameters
            let limit = try Self.count(query.get(KakinQuery.limit), name: "limit", default: 50)
            var cursor: TransactionCursor?
            if let token = query.get(KakinQuery.cursor) {
                guard let parsed = TransactionCursor(token: token) else {
                    throw ServerError(.invalidRequest, "cursor is not a cursor this server gave")
                }
                cursor = parsed
            }
            let rows = try await service.store.transactions(
                bundleID: app.bundleID, appUserID: user, limit: limit + 1, after: cursor)
            let page = Array(rows.prefix(limit))
            let includeJWS = Self.includesJWS(query)
            let answer = TransactionPage(
                nonce: query.get(KakinQuery.nonce), signedDate: epochMilliseconds(service.now()), bundleId: app.bundleID,
                appUserId: user, transactions: page.map { CustomerAnswer.Transaction(recorded: $0, includeJWS: includeJWS) },
                nextCursor: rows.count > limit ? page.last.map { TransactionCursor(after: $0).token } : nil)
            return signed(answer.jsonBytes())
        }
        table.on(.signOffer(), router) { request, context in
            let caller = try context.caller(secret: false)
            let user = try Self.pathParameter(context, "user")
            let body = try await decode(OfferSigningRequest.self, from: request)
            let app = try caller.app(body.bundleId, in: service)
            try Self.checkUserID(user)
            var signing = body
            signing.bundleId = app.bundleID
            return Self.json(try await service.signOffer(signing, appUserID: user))
        }
        table.on(.linkAppTransaction(), router) { request, context in
            let caller = try context.caller(secret: false)
            let user = try Self.pathParameter(context, "user")
            let body = try await decode(AppTransactionSubmission.self, from: request)
            let app = try caller.app(body.bundleId, in: service)
            try Self.checkUserID(user)
            let linked = try await service.linkAppTransaction(
                body.signedAppTransaction, bundleID: app.bundleID, appUserID: user)
            return Self.json(LinkedAppTransaction(appTransactionId: linked.appTransactionID ?? "", appUserId: user))
        }
        table.on(.spend(), router) { request, context in
            let caller = try context.caller(secret: true)
            let user = try Self.pathParameter(context, "user")
            let currency = try Self.pathParameter(context, "currency")
            let body = try await decode(SpendRequest.self, from: request)
            let app = try caller.app(body.bundleId, in: service)
            try Self.checkUserID(user)
            let outcome = try await service.spend(
                bundleID: app.bundleID, appUserID: user, currency: currency, amount: body.amount,
                idempotencyKey: body.idempotencyKey)
            switch outcome {
            case .spent(let balance): return Self.json(SpendAnswer(status: "spent", balance: balance))
            case .alreadySpent(let balance):
                return Self.json(SpendAnswer(status: "alreadySpent", balance: balance))
            case .insufficientBalance(let balance):
                throw ServerError(.insufficientBalance, "the balance is \(balance), less than \(body.amount)")
            }
        }
    }

    /// The signed customer answer: entitlements, balances and the newest transactions
    /// (`?transactions=N`, default 10, at most 100), JWS included with `?include=signedTransaction`.
    func customerAnswer(_ request: Request, bundleID: String, appUserID: String) async throws -> Response {
        let asked = try AnswerQuery(request)
        let (summary, entitlements) = try await service.customerSummary(
            bundleID: bundleID, appUserID: appUserID, recent: asked.recent, withJWS: asked.withJWS)
        return signedCustomerAnswer(asked, summary: summary, entitlements: entitlements)
    }

    /// The signed answer made of a summary that was read as `asked`.
    func signedCustomerAnswer(
        _ asked: AnswerQuery, summary: CustomerSummary, entitlements: [Entitlement]
    ) -> Response {
        let answer = SignedCustomerAnswer(
            nonce: asked.nonce, signedDate: epochMilliseconds(service.now()),
            customer: CustomerAnswer(summary: summary, entitlements: entitlements, includeJWS: asked.withJWS))
        return signed(answer.jsonBytes())
    }

    /// What a customer answer carries, as the query asks: `?transactions=N` (default 10),
    /// `?include=signedTransaction`, `?nonce=`. The query is parsed once per request.
    struct AnswerQuery {
        let recent: Int
        let withJWS: Bool
        let nonce: String?

        init(_ request: Request) throws(ServerError) {
            let query = request.uri.queryParameters
            recent = try KakinServerHTTP.count(
                query.get(KakinQuery.transactions), name: "transactions", default: defaultRecentTransactions,
                allowZero: true)
            withJWS = KakinServerHTTP.includesJWS(query)
            nonce = query.get(KakinQuery.nonce)
        }
    }

    /// An answer with `X-Kakin-Signature`: base64 of the ES256 signature (raw R‖S) over the exact
    /// body bytes, made with the server key published at `/v1/server-key`.
    func signed(_ body: [UInt8]) -> Response {
        let signature = (try? signingKey.signature(for: body).rawRepresentation.base64EncodedString()) ?? ""
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", HTTPField.Name(KakinHeader.signature)!: signature,
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func includesJWS(_ query: Parameters) -> Bool {
        query.get(KakinQuery.include)?.split(separator: ",").contains("signedTransaction") == true
    }

    static func count(
        _ text: String?, name: String, default fallback: Int, allowZero: Bool = false
    ) throws(ServerError) -> Int {
        guard let text else { return fallback }
        guard let value = Int(text), value >= (allowZero ? 0 : 1), value <= maxPageSize else {
            throw ServerError(.invalidRequest, "\(name) must be a number from \(allowZero ? 0 : 1) to \(maxPageSize)")
        }
        return value
    }

    static func bundleID(_ request: Request) throws(ServerError) -> String {
        guard let bundleID = request.uri.queryParameters.get(KakinQuery.bundleID), !bundleID.isEmpty else {
            throw ServerError(.invalidRequest, "?bundleId= is required")
        }
        return bundleID
    }

    /// A path parameter, percent-decoded (`a%20b` is the customer `a b`).
    static func pathParameter(_ context: KakinRequestContext, _ name: String) throws(ServerError) -> String {
        guard let raw = context.parameters.get(name) else {
            throw ServerError(.invalidRequest, "the path has no \(name)")
        }
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        guard let decoded = raw.removingPercentEncoding else {
            throw ServerError(.invalidRequest, "\(name) is not valid percent-encoding")
        }
        return decoded
    }

    static func checkUserID(_ user: String) throws(ServerError) {
        guard !user.isEmpty, user.count <= 256, !user.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw ServerError(.invalidRequest, "appUserId must be 1 to 256 characters, without line breaks")
        }
    }
}
