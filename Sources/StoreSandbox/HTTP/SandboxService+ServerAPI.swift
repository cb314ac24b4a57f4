import AppStoreModels
import AppStoreSecurity
import Foundation
import HTTPTypes
import Hummingbird

/// The App Store Server API, as Apple serves it under `/inApps`: bearer tokens checked against the
/// registered keys, Apple's response bodies, and Apple's error bodies and codes.
extension SandboxService {
    func addServerAPIRoutes(to router: Router<SandboxRequestContext>) {
        let api = router.group("inApps")
        api.get("v1/transactions/:id") { request, context in
            await apple(request, .getTransactionInfo) {
                let transaction = try await engine.transaction(try await transactionID(context))
                return ServiceJSON.response(
                    TransactionInfoResponse(
                        signedTransactionInfo: try engine.signer.signTransaction(transaction, at: engine.clock.now())))
            }
        }
        for version in ["v1", "v2"] {
            api.get("\(version)/history/:id") { request, context in
                await apple(request, version == "v1" ? .getTransactionHistoryV1 : .getTransactionHistory) {
                    let query = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
                    let historyRequest: TransactionHistoryRequest
                    do { historyRequest = try TransactionHistoryRequest(queryItems: query) } catch let error
                        as TransactionHistoryRequest.InvalidQueryParameter
                    {
                        throw AppleAPIFailure(error.errorCode, "\(error)")
                    }
                    return ServiceJSON.response(
                        try await engine.history(
                            for: try await transactionID(context), request: historyRequest,
                            version: version == "v1" ? .v1 : .v2))
                }
            }
        }
        api.get("v1/subscriptions/:id") { request, context in
            await apple(request, .getAllSubscriptionStatuses) {
                let statuses = try request.uri.queryParameters.getAll("status").map { text in
                    guard let value = Int(text), (1...5).contains(value) else {
                        throw AppleAPIFailure(.invalidStatus, "status must be 1 to 5")
                    }
                    return SubscriptionStatus(rawValue: value)
                }
                return ServiceJSON.response(
                    try await engine.subscriptionStatuses(
                        for: try await transactionID(context), statuses: Set(statuses)))
            }
        }
        api.get("v2/refund/lookup/:id") { request, context in
            await apple(request, .getRefundHistory) {
                ServiceJSON.response(
                    try await engine.refundHistory(
                        for: try await transactionID(context), revision: request.uri.queryParameters.get("revision")))
            }
        }
        api.get("v1/transactions/appTransactions/:id") { request, context in
            await apple(request, .getAppTransactionInfo) {
                let testerID = try await engine.customer(of: try await transactionID(context))
                return ServiceJSON.response(
                    AppTransactionInfoResponse(
                        signedAppTransactionInfo: try await engine.signedAppTransaction(for: testerID)))
            }
        }
    }

    /// A transaction ID from the path: digits only, as Apple requires (4000006 otherwise), and one
    /// this sandbox knows (4040010 otherwise).
    private func transactionID(_ context: SandboxRequestContext) async throws -> String {
        let id = try context.parameters.require("id")
        guard !id.isEmpty, id.allSatisfy(\.isASCII), id.allSatisfy(\.isNumber) else {
            throw AppleAPIFailure(.invalidTransactionID, "Invalid transaction id.")
        }
        do { _ = try await engine.customer(of: id) } catch {
            throw AppleAPIFailure(.transactionIDNotFound, "Transaction id not found.")
        }
        return id
    }

    /// Checks the bearer token and the endpoint's request limit, runs the route, and answers
    /// failures as Apple does.
    func apple(
        _ request: Request, _ endpoint: ServerAPIEndpoint, _ body: () async throws -> Response
    ) async -> Response {
        do {
            let claims = try tokenVerifier.verify(authorizationHeader: request.headers[.authorization])
            guard claims.bundleID == engine.signer.bundleID else {
                throw AppleAPIFailure(.invalidAppIdentifier, "Invalid request app identifier.")
            }
        } catch let failure as AppleAPIFailure {
            return failure.response
        } catch {
            // Apple answers a bad or expired token with 401 and no body.
            return Response(status: .unauthorized)
        }
        if let retryAt = rateLimiter?.admit(endpoint, at: engine.clock.now()) {
            var response = AppleAPIFailure(.rateLimitExceeded, "Rate limit exceeded.").response
            response.headers[.retryAfter] = String(Int64((retryAt.timeIntervalSince1970 * 1000).rounded()))
            return response
        }
        do { return try await body() } catch let failure as AppleAPIFailure {
            return failure.response
        } catch let error as SandboxError {
            switch error.code {
            case .unknownTransaction, .unknownTester:
                return AppleAPIFailure(.transactionIDNotFound, "Transaction id not found.").response
            case .invalidRequest:
                return AppleAPIFailure(.invalidRequestRevision, "Invalid request revision.").response
            default:
                return AppleAPIFailure(.generalInternal, "An unknown error occurred.").response
            }
        } catch {
            return AppleAPIFailure(.generalInternal, "An unknown error occurred.").response
        }
    }
}

/// An App Store Server API failure: Apple's `{errorCode, errorMessage}` with the HTTP status the
/// code's first three digits name.
struct AppleAPIFailure: Error {
    let code: APIErrorCode
    let message: String

    init(_ code: APIErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    var response: Response {
        ServiceJSON.response(
            APIErrorResponse(errorCode: code, errorMessage: message),
            status: HTTPResponse.Status(code: code.httpStatus ?? 500))
    }
}

extension SandboxService {
    /// Test notifications and notification history.
    func addNotificationAPIRoutes(to router: Router<SandboxRequestContext>) {
        let api = router.group("inApps/v1/notifications")
        api.post("test") { request, _ in
            await apple(request, .requestTestNotification) {
                ServiceJSON.response(
                    SendTestNotificationResponse(testNotificationToken: try await engine.requestTestNotification()))
            }
        }
        api.get("test/:token") { request, context in
            await apple(request, .getTestNotificationStatus) {
                do {
                    return ServiceJSON.response(
                        try await engine.testNotificationStatus(token: try context.parameters.require("token")))
                } catch {
                    throw AppleAPIFailure(.testNotificationNotFound, "Test notification not found.")
                }
            }
        }
        api.post("history") { request, _ in
            await apple(request, .getNotificationHistory) {
                let body = try await ServiceJSON.decode(NotificationHistoryRequest.self, from: request)
                if body.transactionID != nil, body.notificationType != nil {
                    throw AppleAPIFailure(
                        .multipleFiltersSupplied, "Only one of transactionId or notificationType may be used.")
                }
                do {
                    return ServiceJSON.response(
                        try await engine.notificationHistory(
                            body, paginationToken: request.uri.queryParameters.get("paginationToken")))
                } catch let error as SandboxError where error.code == .invalidRequest {
                    throw AppleAPIFailure(
                        body.startDate == nil ? .invalidStartDate : .invalidPaginationToken, error.message)
                }
            }
        }
    }
}
