import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import KakinHTTP

extension KakinServerHTTP {
    struct TransactionBody: Decodable {
        var bundleId: String
        var appUserId: String
        var signedTransaction: String
    }

    struct ReceiptBody: Decodable {
        var bundleId: String
        var appUserId: String
        var receipt: String
        var transactionId: String?
    }

    struct SpendBody: Decodable {
        var bundleId: String
        var amount: Int64
        var idempotencyKey: String
    }

    struct SpendResponse: Encodable {
        var status: String
        var balance: Int64
    }

    /// The signed answer about a customer: what the SDK trusts, bound to the nonce it sent.
    struct CustomerResponse: Encodable {
        var nonce: String?
        var signedDate: Date
        var customer: CustomerState
    }

    func addPurchaseRoutes(to router: Router<BasicRequestContext>) {
        router.post("v1/transactions") { request, _ in
            await handle("transactions") {
                let body = try await decode(TransactionBody.self, from: request)
                try authenticate(request, bundleID: body.bundleId, secret: false)
                try Self.checkUserID(body.appUserId)
                let customer = try await service.submitTransaction(
                    body.signedTransaction, bundleID: body.bundleId, appUserID: body.appUserId)
                return signed(customer, nonce: request.uri.queryParameters.get("nonce"))
            }
        }
        router.post("v1/receipts") { request, _ in
            await handle("receipts") {
                let body = try await decode(ReceiptBody.self, from: request)
                try authenticate(request, bundleID: body.bundleId, secret: false)
                try Self.checkUserID(body.appUserId)
                let customer = try await service.submitReceipt(
                    body.receipt, bundleID: body.bundleId, appUserID: body.appUserId)
                return signed(customer, nonce: request.uri.queryParameters.get("nonce"))
            }
        }
        router.post("v1/notifications/apple") { request, _ in
            await handle("notifications") {
                let body = try await decode(ResponseBodyV2.self, from: request)
                switch try await service.receiveNotification(body) {
                case .processed(let type): return Self.json(["status": "processed", "notificationType": type.rawValue])
                case .duplicate: return Self.json(["status": "duplicate"])
                }
            }
        }
    }

    func addCustomerRoutes(to router: Router<BasicRequestContext>) {
        router.get("v1/customers/:user") { request, context in
            await handle("customers") {
                let bundleID = try Self.bundleID(request)
                try authenticate(request, bundleID: bundleID, secret: false)
                let user = try context.parameters.require("user")
                try Self.checkUserID(user)
                let customer = try await service.customer(bundleID: bundleID, appUserID: user)
                return signed(customer, nonce: request.uri.queryParameters.get("nonce"))
            }
        }
        router.post("v1/customers/:user/balances/:currency/spend") { request, context in
            await handle("spend") {
                let body = try await decode(SpendBody.self, from: request)
                try authenticate(request, bundleID: body.bundleId, secret: true)
                let user = try context.parameters.require("user")
                try Self.checkUserID(user)
                let outcome = try await service.spend(
                    bundleID: body.bundleId, appUserID: user, currency: try context.parameters.require("currency"),
                    amount: body.amount, idempotencyKey: body.idempotencyKey)
                switch outcome {
                case .spent(let balance): return Self.json(SpendResponse(status: "spent", balance: balance))
                case .alreadySpent(let balance):
                    return Self.json(SpendResponse(status: "alreadySpent", balance: balance))
                case .insufficientBalance(let balance):
                    throw ServerError(.insufficientBalance, "the balance is \(balance), less than \(body.amount)")
                }
            }
        }
    }

    /// A customer answer with `X-Kakin-Signature`: base64 of the ES256 signature (raw R‖S) over
    /// the exact body bytes, made with the server key published at `/v1/server-key`.
    func signed(_ customer: CustomerState, nonce: String?) -> Response {
        let body = Self.encode(CustomerResponse(nonce: nonce, signedDate: service.now(), customer: customer))
        let signature = (try? signingKey.signature(for: body).rawRepresentation.base64EncodedString()) ?? ""
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", HTTPField.Name("X-Kakin-Signature")!: signature,
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func bundleID(_ request: Request) throws(ServerError) -> String {
        guard let bundleID = request.uri.queryParameters.get("bundleId"), !bundleID.isEmpty else {
            throw ServerError(.invalidRequest, "?bundleId= is required")
        }
        return bundleID
    }

    static func checkUserID(_ user: String) throws(ServerError) {
        guard !user.isEmpty, user.count <= 256, !user.contains(where: \.isNewline) else {
            throw ServerError(.invalidRequest, "appUserId must be 1 to 256 characters")
        }
    }
}
