import AppStoreModels
import Foundation
import Hummingbird

/// The control API's In-App Purchase keys (which check offer signatures), the consumption
/// information developers sent, refund decisions, and Family Sharing.
extension SandboxService {
    struct OfferKeysResponse: Codable, Sendable {
        var keys: [SandboxOfferKey]
    }

    struct ConsumptionReportsResponse: Codable, Sendable {
        struct Entry: Codable, Sendable {
            var transactionID: String
            var report: ConsumptionRequest
        }
        var reports: [Entry]
    }

    struct RefundDecisionBody: Codable, Sendable {
        var rule: RefundDecisionRule?
    }

    struct FamilyShareBody: Codable, Sendable {
        var memberID: String
    }

    func addOfferControlRoutes(to control: RouterGroup<SandboxRequestContext>) {
        control.get("keys") { _, _ in
            ServiceJSON.response(OfferKeysResponse(keys: await engine.offerKeys()))
        }
        control.post("keys") { request, _ in
            await respond {
                let key = try await ServiceJSON.decode(SandboxOfferKey.self, from: request)
                try await engine.registerOfferKey(key)
                return ServiceJSON.response(key, status: .created)
            }
        }
        control.delete("keys/:key") { _, context in
            await respond {
                try await engine.removeOfferKey(try context.parameters.require("key"))
                return Response(status: .noContent)
            }
        }
        control.get("consumption-reports") { _, _ in
            ServiceJSON.response(
                ConsumptionReportsResponse(
                    reports: await engine.consumptionReports().map { .init(transactionID: $0.transactionID, report: $0.report) }))
        }
        control.post("transactions/:transaction/share-with-family") { request, context in
            await respond {
                let body = try await ServiceJSON.decode(FamilyShareBody.self, from: request)
                let shared = try await engine.shareWithFamily(
                    try context.parameters.require("transaction"), member: body.memberID)
                return ServiceJSON.response(OutcomeResponse(state: "familyShared", transactionID: shared.id), status: .created)
            }
        }
        control.post("transactions/:transaction/decide-refund") { request, context in
            await respond {
                let body = try await ServiceJSON.decode(RefundDecisionBody.self, from: request)
                let transactionID = try context.parameters.require("transaction")
                let granted = try await engine.decideRefund(transactionID, rule: body.rule ?? .followPreference)
                return ServiceJSON.response(
                    OutcomeResponse(state: granted ? "refunded" : "refundDeclined", transactionID: transactionID))
            }
        }
    }
}
