import AppStoreModels
import Foundation
import KakinLedger
import HTTPTypes
import Hummingbird
import KakinHTTP
import KakinWire

/// The routes that bring purchases in: the SDK's signed transactions and legacy receipts
/// (publishable key), Apple's notifications and Stripe's events (signed, no key).
struct PurchaseController: RouteController {
    let service: PurchaseService
    let reader: RequestReader
    let answers: CustomerAnswerSigner

    func addRoutes(to routes: inout RouteTable) {
        routes.on(.submitTransaction) { request, context in
            let caller = try context.caller(secret: false)
            let body = try await reader.decodeSubmission(from: request)
            let app = try caller.app(body.bundleId, in: service)
            let asked = try CustomerAnswerSigner.AnswerQuery(request, caller: caller, app: app)
            // An anonymous customer who became an identified one uploads for the identified one.
            let user = try await caller.customer(
                body.appUserId, of: app, request: request, service: service, checksConsent: false)
            let (_, summary, entitlements) = try await service.submit(
                body.signedTransaction, app: app, appUserID: user, recent: asked.recent, withJWS: asked.withJWS,
                signedAppTransaction: body.signedAppTransaction)
            if user == body.appUserId,
                let identified = try await service.followAlias(of: user, bundleID: app.bundleID)
            {
                return try await answers.answer(asked, bundleID: app.bundleID, appUserID: identified)
            }
            return answers.answer(asked, summary: summary, entitlements: entitlements)
        }
        routes.on(.submitReceipt) { request, context in
            let caller = try context.caller(secret: false)
            let body = try await reader.decode(ReceiptSubmission.self, from: request)
            let app = try caller.app(body.bundleId, in: service)
            let asked = try CustomerAnswerSigner.AnswerQuery(request, caller: caller, app: app)
            var user = try await caller.customer(
                body.appUserId, of: app, request: request, service: service, checksConsent: false)
            _ = try await service.submitReceipt(body.receipt, bundleID: app.bundleID, appUserID: user)
            if user == body.appUserId,
                let identified = try await service.followAlias(of: user, bundleID: app.bundleID)
            {
                user = identified
            }
            return try await answers.answer(asked, bundleID: app.bundleID, appUserID: user)
        }
        // Apple posts here without a key: the signature is the authentication.
        routes.on(.appleNotification) { request, _ in
            let body = try await reader.decode(ResponseBodyV2.self, from: request)
            switch try await service.receiveNotification(body) {
            case .processed(let type):
                return JSONBody.response(NotificationAnswer(status: "processed", notificationType: type.rawValue))
            case .duplicate:
                return JSONBody.response(NotificationAnswer(status: "duplicate"))
            }
        }
        // Stripe posts an app's events here without a key: the signature over the body as received
        // is the authentication.
        routes.on(.stripeNotification()) { request, context in
            let bundleID = try RequestReader.pathParameter(context, "bundle")
            let body = Data(buffer: try await reader.body(of: request))
            let signature = request.headers[HTTPField.Name("Stripe-Signature")!]
            let receipt = try await service.receiveStripeEvent(bundleID: bundleID, signature: signature, body: body)
            // Stripe is answered once the event is durable; it is applied after, in the app's run.
            if receipt.status == "recorded" {
                Task { await service.applyStripeEventsNow(bundleID: bundleID) }
            }
            return JSONBody.response(receipt)
        }
        // Apple asks here which retention message to show, without a key: the signature is the
        // authentication.
        routes.on(.appleRetention) { request, _ in
            let body = try await reader.decode(RealtimeRequestBody.self, from: request)
            return JSONBody.response(try await service.answerRetentionRequest(body).answer)
        }
    }
}
