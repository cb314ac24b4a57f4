import AppStoreModels
import Foundation
import Hummingbird

/// The control API's offer codes, simulated StoreKit errors, refund outcomes, price increases and
/// parental consent.
extension SandboxService {
    struct SimulatedErrorBody: Codable, Sendable {
        /// The `SKError.Code` number the API fails with; `null` clears it.
        var code: StoreKitErrorCode?
    }

    struct SimulatedErrorsResponse: Codable, Sendable {
        /// API name to `SKError.Code` number.
        var errors: [String: StoreKitErrorCode]
    }

    struct OfferCodesResponse: Codable, Sendable {
        var offerCodes: [SandboxOfferCode]
    }

    struct PriceIncreaseBody: Codable, Sendable {
        /// The new price in milliunits of the storefront's currency (12990 = 12.99).
        var priceMilliunits: Int64
        /// Whether the customer must agree (true by default, as for most increases).
        var requiresConsent: Bool?
    }

    func addStoreKitControlRoutes(to control: RouterGroup<SandboxRequestContext>) {
        control.get("simulated-errors") { _, _ in
            let errors = await engine.simulatedErrors
            return ServiceJSON.response(
                SimulatedErrorsResponse(
                    errors: Dictionary(uniqueKeysWithValues: errors.map { ($0.key.rawValue, $0.value) })))
        }
        control.put("simulated-errors/:api") { request, context in
            await respond {
                let api = try Self.api(try context.parameters.require("api"))
                let body = try await ServiceJSON.decode(SimulatedErrorBody.self, from: request)
                try await engine.setSimulatedError(body.code, for: api)
                return ServiceJSON.response(body)
            }
        }
        control.delete("simulated-errors/:api") { _, context in
            await respond {
                try await engine.setSimulatedError(nil, for: try Self.api(try context.parameters.require("api")))
                return Response(status: .noContent)
            }
        }
        control.get("offer-codes") { _, _ in
            ServiceJSON.response(OfferCodesResponse(offerCodes: await engine.offerCodes()))
        }
        control.post("offer-codes") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(SandboxOfferCode.self, from: request)
                return ServiceJSON.response(try await engine.defineOfferCode(body), status: .created)
            }
        }
        control.delete("offer-codes/:code") { _, context in
            await respond {
                try await engine.removeOfferCode(try context.parameters.require("code"))
                return Response(status: .noContent)
            }
        }
        control.post("transactions/:transaction/decline-refund") { _, context in
            await respond {
                let transactionID = try context.parameters.require("transaction")
                try await engine.declineRefund(transactionID)
                return ServiceJSON.response(OutcomeResponse(state: "refundDeclined", transactionID: transactionID))
            }
        }
        control.post("transactions/:transaction/reverse-refund") { _, context in
            await respond {
                let transaction = try await engine.reverseRefund(try context.parameters.require("transaction"))
                return ServiceJSON.response(OutcomeResponse(state: "refundReversed", transactionID: transaction.id))
            }
        }
        control.post("subscriptions/:original/price-increase") { request, context in
            await respond {
                let body = try await ServiceJSON.decode(PriceIncreaseBody.self, from: request)
                let original = try context.parameters.require("original")
                try await engine.increasePrice(
                    originalTransactionID: original, to: body.priceMilliunits,
                    requiresConsent: body.requiresConsent ?? true)
                return ServiceJSON.response(try await engine.renewalInfo(originalTransactionID: original))
            }
        }
        control.post("subscriptions/:original/price-increase/consent") { _, context in
            await respond {
                let original = try context.parameters.require("original")
                try await engine.consentToPriceIncrease(originalTransactionID: original)
                return ServiceJSON.response(try await engine.renewalInfo(originalTransactionID: original))
            }
        }
        control.post("testers/:tester/rescind-consent") { _, context in
            await respond {
                ServiceJSON.response(try await engine.rescindConsent(of: try context.parameters.require("tester")))
            }
        }
        control.post("testers/:tester/restore-consent") { _, context in
            await respond {
                ServiceJSON.response(try await engine.restoreConsent(of: try context.parameters.require("tester")))
            }
        }
    }

    static func api(_ name: String) throws(RouteFailure) -> StoreKitTestAPI {
        guard let api = StoreKitTestAPI(rawValue: name) else {
            throw RouteFailure(
                ServiceJSON.error(
                    .notFound, code: "invalidRequest",
                    message:
                        "no StoreKit API is named \(name); the names are "
                        + StoreKitTestAPI.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        return api
    }
}
