import AppStoreModels
import Foundation
import Hummingbird

/// Renewal date extensions, consumption information and order lookup on the App Store Server API.
extension SandboxService {
    func addExtensionAPIRoutes(to router: Router<SandboxRequestContext>) {
        let api = router.group("inApps")
        api.put("v1/subscriptions/extend/:original") { request, context in
            await apple(request, .extendSubscriptionRenewalDate) {
                let body = try await ServiceJSON.decode(ExtendRenewalDateRequest.self, from: request)
                try Self.checkExtension(
                    days: body.extendByDays, reason: body.extendReasonCode, identifier: body.requestIdentifier)
                do {
                    return ServiceJSON.response(
                        try await engine.extendRenewalDate(
                            originalTransactionID: try context.parameters.require("original"),
                            days: body.extendByDays ?? 0))
                } catch let error as SandboxError where error.code == .ineligible {
                    throw AppleAPIFailure(.subscriptionExtensionIneligible, "Subscription extension ineligible.")
                } catch let error as SandboxError where error.code == .limitReached {
                    throw AppleAPIFailure(.subscriptionMaxExtension, "Subscription maximum extension reached.")
                } catch let error as SandboxError where error.code == .unknownTransaction {
                    throw AppleAPIFailure(.originalTransactionIDNotFound, "Original transaction id not found.")
                }
            }
        }
        api.post("v1/subscriptions/extend/mass") { request, _ in
            await apple(request, .extendRenewalDatesForAllActiveSubscribers) {
                let body = try await ServiceJSON.decode(MassExtendRenewalDateRequest.self, from: request)
                try Self.checkExtension(
                    days: body.extendByDays, reason: body.extendReasonCode, identifier: body.requestIdentifier)
                guard let productID = body.productID, catalog.product(id: productID) != nil else {
                    throw AppleAPIFailure(.invalidProductID, "Invalid product id.")
                }
                let storefronts = body.storefrontCountryCodes ?? []
                guard storefronts.allSatisfy({ Storefront.lookup(countryCode: $0, in: catalog.storefronts) != nil })
                else {
                    throw AppleAPIFailure(.invalidStorefrontCountryCode, "Invalid storefront country code.")
                }
                let status = try await engine.massExtendRenewalDate(
                    productID: productID, days: body.extendByDays ?? 0, requestIdentifier: body.requestIdentifier ?? "",
                    storefronts: storefronts)
                return ServiceJSON.response(MassExtendRenewalDateResponse(requestIdentifier: status.requestIdentifier))
            }
        }
        api.get("v1/subscriptions/extend/mass/:product/:request") { request, context in
            await apple(request, .getStatusOfRenewalDateExtensions) {
                do {
                    return ServiceJSON.response(
                        try await engine.massExtensionStatus(
                            productID: try context.parameters.require("product"),
                            requestIdentifier: try context.parameters.require("request")))
                } catch {
                    throw AppleAPIFailure(.statusRequestNotFound, "Status request not found.")
                }
            }
        }
        for version in ["v1", "v2"] {
            api.put("\(version)/transactions/consumption/:id") { request, context in
                await apple(request, version == "v1" ? .sendConsumptionInformationV1 : .sendConsumptionInformation) {
                    let report: ConsumptionRequest
                    if version == "v1" {
                        let body = try await ServiceJSON.decode(ConsumptionRequestV1.self, from: request)
                        report = ConsumptionRequest(
                            customerConsented: body.customerConsented, sampleContentProvided: body.sampleContentProvided
                        )
                    } else {
                        report = try await ServiceJSON.decode(ConsumptionRequest.self, from: request)
                    }
                    guard report.customerConsented == true else {
                        throw AppleAPIFailure(.invalidCustomerConsented, "Invalid customer consented.")
                    }
                    do {
                        try await engine.reportConsumption(transactionID: try context.parameters.require("id"), report)
                    } catch let error as SandboxError where error.code == .ineligible {
                        throw AppleAPIFailure(.invalidTransactionNotConsumable, "Invalid transaction not consumable.")
                    }
                    return Response(status: version == "v1" ? .accepted : .ok)
                }
            }
        }
        api.put("v1/transactions/:id/appAccountToken") { request, context in
            await apple(request, .setAppAccountToken) {
                let body = try await ServiceJSON.decode(UpdateAppAccountTokenRequest.self, from: request)
                guard let token = body.appAccountToken.flatMap(UUID.init(uuidString:)) else {
                    throw AppleAPIFailure(.invalidAppAccountTokenUUID, "Invalid appAccountToken UUID.")
                }
                let id = try context.parameters.require("id")
                do {
                    try await engine.setAppAccountToken(token, originalTransactionID: id)
                } catch let error as SandboxError where error.code == .unknownTransaction {
                    // A renewal's or an upgrade's own ID names a transaction, but not a purchase.
                    if (try? await engine.transaction(id)) != nil {
                        throw AppleAPIFailure(
                            .transactionIDIsNotOriginalTransactionID, "Transaction id is not original transaction id.")
                    }
                    throw AppleAPIFailure(.originalTransactionIDNotFound, "Original transaction id not found.")
                } catch let error as SandboxError where error.code == .ineligible {
                    throw AppleAPIFailure(.familyTransactionNotSupported, "Family transaction not supported.")
                }
                return Response(status: .ok)
            }
        }
        api.post("v1/transactions/:id/finish") { request, context in
            await apple(request, .finishTransaction) {
                try await engine.finishFromServer(try context.parameters.require("id"))
                return Response(status: .ok)
            }
        }
        api.get("v1/lookup/:order") { request, context in
            await apple(request, .lookUpOrderID) {
                let transactions = await engine.lookUpOrder(try context.parameters.require("order"))
                let now = engine.clock.now()
                return ServiceJSON.response(
                    OrderLookupResponse(
                        status: transactions.isEmpty ? .invalid : .valid,
                        signedTransactions: try transactions.map { try engine.signer.signTransaction($0, at: now) }))
            }
        }
    }

    static func checkExtension(days: Int?, reason: ExtendReasonCode?, identifier: String?) throws {
        guard let days, (1...90).contains(days) else {
            throw AppleAPIFailure(.invalidExtendByDays, "Invalid extend by days value.")
        }
        guard let reason, (0...3).contains(reason.rawValue) else {
            throw AppleAPIFailure(.invalidExtendReasonCode, "Invalid extend reason code.")
        }
        guard let identifier, !identifier.isEmpty, identifier.count <= 128 else {
            throw AppleAPIFailure(.invalidRequestIdentifier, "Invalid request identifier.")
        }
    }
}
