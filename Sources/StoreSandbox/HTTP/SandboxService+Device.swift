import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import KakinHTTP

/// The device API: one call per StoreKit operation, used by the Kakin SDK's sandbox backend.
extension SandboxService {
    /// A signed transaction as the device receives it: the JWS (`jwsRepresentation`) and its payload.
    struct DeviceTransaction: Codable, Sendable {
        var jwsRepresentation: String
        var transaction: JWSTransactionDecodedPayload
    }

    struct ProductsResponse: Codable, Sendable {
        var products: [LocalizedProduct]
        var invalidProductIdentifiers: [InvalidProductIdentifier]
    }

    struct PaymentBody: Codable, Sendable {
        var testerID: String
        var productID: String
        var quantity: Int?
        var appAccountToken: UUID?
        var applicationUsername: String?
        var simulatesAskToBuy: Bool?
        var promotionalOfferID: String?
        var winBackOfferID: String?
        var promotionalOfferSignature: PromotionalOfferSignature?
        var introductoryOfferEligibilityJWS: String?
        /// `MONTHLY` for a subscription's monthly plan with a 12-month commitment.
        var billingPlanType: String?
    }

    struct PaymentResponse: Codable, Sendable {
        struct Failure: Codable, Sendable {
            var code: Int
            var userCancelled: Bool
        }
        /// `purchased`, `deferred` or `failed`, as StoreKit's transaction states.
        var state: String
        var transaction: DeviceTransaction?
        var pendingPurchaseID: String?
        var error: Failure?
    }

    struct TransactionsResponse: Codable, Sendable {
        var transactions: [DeviceTransaction]
    }

    struct UpdatesResponse: Codable, Sendable {
        var transactions: [DeviceTransaction]
        /// Pass as `after` on the next call.
        var lastSequence: Int
    }

    struct ReceiptResponse: Codable, Sendable {
        var receipt: String
    }

    struct AppTransactionResponse: Codable, Sendable {
        var jwsRepresentation: String
    }

    func addDeviceRoutes(to router: Router<SandboxRequestContext>) {
        let device = router.group("v1/device")
        addStoreKitDeviceRoutes(to: device)
        device.get("products") { request, _ in
            await respond {
                let testerID = request.uri.queryParameters.get("tester") ?? ""
                let tester = try await engine.tester(testerID)
                try await engine.checkSimulatedError(.loadProducts)
                let storefront = try Storefront.named(tester.storefront)
                let ids =
                    request.uri.queryParameters.getAll("id")
                    + (request.uri.queryParameters.get("ids")?.split(separator: ",").map(String.init) ?? [])
                let (products, invalid) = catalog.localizedProducts(for: ids, storefront: storefront)
                return ServiceJSON.response(ProductsResponse(products: products, invalidProductIdentifiers: invalid))
            }
        }
        device.post("payments") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(PaymentBody.self, from: request)
                let payment = PurchaseRequest(
                    testerID: body.testerID, productID: body.productID, quantity: body.quantity ?? 1,
                    appAccountToken: body.appAccountToken, applicationUsername: body.applicationUsername,
                    simulatesAskToBuy: body.simulatesAskToBuy ?? false, promotionalOfferID: body.promotionalOfferID,
                    winBackOfferID: body.winBackOfferID, promotionalOfferSignature: body.promotionalOfferSignature,
                    introductoryOfferEligibilityJWS: body.introductoryOfferEligibilityJWS,
                    billingPlanType: body.billingPlanType.map(BillingPlanType.init))
                // Refused before the payment starts, as StoreKit refuses a plan the product lacks.
                _ = try await engine.checkBillingPlan(payment)
                let outcome = try await engine.purchase(payment, offerKeys: configuration.apiKeys)
                return try paymentResponse(outcome)
            }
        }
        device.get("testers/:tester") { _, context in
            await respond { ServiceJSON.response(try await engine.tester(try context.parameters.require("tester"))) }
        }
        device.get("testers/:tester/transactions/unfinished") { _, context in
            await respond {
                let testerID = try context.parameters.require("tester")
                _ = try await engine.tester(testerID)
                return ServiceJSON.response(
                    TransactionsResponse(transactions: try await engine.unfinishedTransactions(of: testerID).map(sign)))
            }
        }
        device.get("testers/:tester/entitlements") { _, context in
            await respond {
                let testerID = try context.parameters.require("tester")
                _ = try await engine.tester(testerID)
                return ServiceJSON.response(
                    TransactionsResponse(transactions: try await engine.currentEntitlements(of: testerID).map(sign)))
            }
        }
        device.post("testers/:tester/restore") { _, context in
            await respond {
                let testerID = try context.parameters.require("tester")
                _ = try await engine.tester(testerID)
                try await engine.checkSimulatedError(.appStoreSync)
                return ServiceJSON.response(
                    TransactionsResponse(transactions: try await engine.restorableTransactions(of: testerID).map(sign)))
            }
        }
        device.post("testers/:tester/transactions/:transaction/finish") { _, context in
            await respond {
                try await engine.finish(
                    try context.parameters.require("transaction"), testerID: try context.parameters.require("tester"))
                return Response(status: .noContent)
            }
        }
        // Long polling: answers at once when there are updates after `after`, otherwise waits up to
        // `timeout` seconds (at most 60) for one. With `Accept: text/event-stream`, server-sent events.
        device.get("testers/:tester/updates") { request, context in
            await respond {
                let testerID = try context.parameters.require("tester")
                if request.headers[.accept]?.contains("text/event-stream") == true {
                    return try await updateStream(testerID: testerID, request: request)
                }
                let after = request.uri.queryParameters.get("after").flatMap { Int($0) } ?? 0
                let timeout = min(60, max(0, request.uri.queryParameters.get("timeout").flatMap { Double($0) } ?? 0))
                var found = try await engine.updates(of: testerID, after: after)
                if found.transactions.isEmpty, timeout > 0 {
                    await engine.waitForUpdate(timeout: .milliseconds(Int(timeout * 1000)))
                    found = try await engine.updates(of: testerID, after: after)
                }
                return ServiceJSON.response(
                    UpdatesResponse(transactions: try found.transactions.map(sign), lastSequence: found.lastSequence))
            }
        }
        device.get("testers/:tester/app-transaction") { _, context in
            await respond {
                try await engine.checkSimulatedError(.appTransaction)
                return ServiceJSON.response(
                    AppTransactionResponse(
                        jwsRepresentation: try await engine.signedAppTransaction(
                            for: try context.parameters.require("tester"))))
            }
        }
        // Hosted content for a product the tester owns, with Range for pausing and resuming.
        device.get("testers/:tester/content/:product") { request, context in
            await respond {
                let testerID = try context.parameters.require("tester")
                let productID = try context.parameters.require("product")
                let owned = try await engine.currentEntitlements(of: engine.tester(testerID).id)
                guard owned.contains(where: { $0.productID == productID }) else {
                    throw RouteFailure(
                        ServiceJSON.error(
                            .forbidden, code: "notEntitled", message: "\(testerID) does not own \(productID)"))
                }
                guard let package = content.package(for: productID, in: catalog) else {
                    throw RouteFailure(
                        ServiceJSON.error(
                            .notFound, code: "noHostedContent", message: "\(productID) has no hosted content"))
                }
                var response = RangedDownload.response(package, request: request, contentType: "application/zip")
                response.headers[HTTPField.Name("X-Content-SHA256")!] = RangedDownload.etag(package).trimmingCharacters(
                    in: ["\""])
                response.headers[HTTPField.Name("X-Content-Version")!] =
                    catalog.product(id: productID)?.hostedContent?.contentVersion ?? "1.0"
                return response
            }
        }
        device.get("testers/:tester/receipt") { request, context in
            await respond {
                guard let device = request.uri.queryParameters.get("device").flatMap(UUID.init(uuidString:)) else {
                    throw RouteFailure(
                        ServiceJSON.error(
                            .badRequest, code: "invalidRequest",
                            message: "?device=<identifierForVendor UUID> is required"))
                }
                let bytes = try await engine.appReceipt(
                    for: try context.parameters.require("tester"), deviceIdentifier: device)
                return ServiceJSON.response(ReceiptResponse(receipt: Data(bytes).base64EncodedString()))
            }
        }
    }

    /// A payment's outcome as the device API answers it: `purchased` with the signed transaction,
    /// `deferred` with the pending purchase, or `failed` with the StoreKit code.
    func paymentResponse(_ outcome: PurchaseOutcome) throws -> Response {
        switch outcome {
        case .purchased(let transaction):
            return ServiceJSON.response(PaymentResponse(state: "purchased", transaction: try sign(transaction)))
        case .deferred(let pending):
            return ServiceJSON.response(PaymentResponse(state: "deferred", pendingPurchaseID: pending.id))
        case .failed(let code):
            return ServiceJSON.response(
                PaymentResponse(
                    state: "failed", error: .init(code: code.rawValue, userCancelled: code.isUserCancellation)))
        }
    }

    func sign(_ transaction: SandboxTransaction) throws -> DeviceTransaction {
        let now = engine.clock.now()
        return DeviceTransaction(
            jwsRepresentation: try engine.signer.signTransaction(transaction, at: now),
            transaction: transaction.payload(bundleID: engine.signer.bundleID, signedDate: now))
    }
}
