import Crypto
import Foundation
import KakinLedger
import HTTPTypes
import Hummingbird
import KakinWire

/// Makes the signed customer answers of uploads and reads: the customer's state as the request
/// asks for it, with `X-Kakin-Signature` over the exact body bytes.
struct CustomerAnswerSigner: Sendable {
    let service: PurchaseService
    /// The server key published at `/v1/server-key`.
    let signingKey: P256.Signing.PrivateKey

    /// How many transactions a customer answer carries unless `?transactions=` says otherwise.
    static let defaultRecentTransactions = 10

    /// The signed customer answer: entitlements, balances and the newest transactions
    /// (`?transactions=N`, default 10, at most 100), JWS included with `?include=signedTransaction`.
    func answer(_ asked: AnswerQuery, bundleID: String, appUserID: String) async throws -> Response {
        let (summary, entitlements) = try await service.customerSummary(
            bundleID: bundleID, appUserID: appUserID, recent: asked.recent, withJWS: asked.withJWS)
        return answer(asked, summary: summary, entitlements: entitlements)
    }

    /// The signed answer made of a summary that was read as `asked`.
    func answer(_ asked: AnswerQuery, summary: CustomerSummary, entitlements: [Entitlement]) -> Response {
        let answer = SignedCustomerAnswer(
            nonce: asked.nonce, signedDate: epochMilliseconds(service.now()),
            customer: CustomerAnswer(summary: summary, entitlements: entitlements, includeJWS: asked.withJWS))
        return signed(answer.jsonBytes())
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

    /// What a customer answer carries, as the query asks: `?transactions=N` (default 10),
    /// `?include=signedTransaction` (the app's secret key only: 403 `forbidden` otherwise),
    /// `?nonce=`. The query is parsed once per request.
    struct AnswerQuery {
        let recent: Int
        let withJWS: Bool
        let nonce: String?

        init(_ request: Request, caller: KakinServerHTTP.Caller, app: AppConfiguration) throws(ServerError) {
            let query = request.uri.queryParameters
            recent = try RequestReader.count(
                query.get(KakinQuery.transactions), name: "transactions", default: defaultRecentTransactions,
                allowZero: true)
            withJWS = RequestReader.includesJWS(query)
            if withJWS { try caller.checkMayReadSignedTransactions(of: app) }
            nonce = query.get(KakinQuery.nonce)
        }
    }
}
