import AppStoreModels
import Foundation

extension SandboxRetention {
    /// A tester opens the page where they may cancel `originalTransactionID`'s subscription: the
    /// App Store signs a `Get Retention Message` request (as it signs notifications), POSTs it to
    /// the configured real-time URL, waits up to ``Configuration/responseLimit``, and shows the
    /// message the server chose, or the default message for the product and `locale` when the
    /// answer is missing, late or invalid. The request and its outcome are recorded
    /// (``requests(bundleID:)``) and returned.
    ///
    /// - Throws: ``SandboxError/Code/unknownTransaction`` for an unknown transaction,
    ///   ``SandboxError/Code/invalidRequest`` when it is not an auto-renewable subscription.
    @discardableResult
    public func openCancelPage(
        originalTransactionID: String, locale: String = "en-US"
    ) async throws(SandboxError) -> RetentionRequestRecord {
        let productID = try await subscriptionProduct(originalTransactionID)
        let (identifier, jws, date) = try sign(
            originalTransactionID: originalTransactionID, productID: productID,
            locale: locale)
        var record = RetentionRequestRecord(
            requestIdentifier: identifier, originalTransactionID: originalTransactionID, productID: productID,
            userLocale: locale, url: apps[bundleID]?.realtimeURL?.absoluteString, signedPayload: jws, signedDate: date)
        if let url = apps[bundleID]?.realtimeURL {
            let exchange = await sender.send(signedPayload: jws, to: url, deadline: configuration.responseLimit)
            let verdict = evaluate(exchange, limit: configuration.responseLimit)
            record.status = exchange.status
            record.response = verdict.response
            record.elapsedMilliseconds = exchange.elapsed.wholeMilliseconds
            record.answeredInTime = verdict.failure == nil
            record.failure = verdict.failure
            record.problem = verdict.problem
            if verdict.failure == nil { record.shownMessageIdentifier = verdict.response?.chosenMessageIdentifier }
        }
        if !record.answeredInTime {
            record.shownMessageIdentifier = apps[bundleID]?.defaults[DefaultKey(productID: productID, locale: locale)]
            record.shownDefault = record.shownMessageIdentifier != nil
        }
        apps[bundleID, default: AppState()].requests.append(record)
        return record
    }

    /// The product a subscription renews to now: its renewal info's product, or its transaction's.
    func subscriptionProduct(_ originalTransactionID: String) async throws(SandboxError) -> String {
        let transaction = try await engine.transaction(originalTransactionID)
        guard transaction.productType == .autoRenewableSubscription else {
            throw SandboxError(.invalidRequest, "\(originalTransactionID) is not an auto-renewable subscription")
        }
        let renewal = try? await engine.renewalInfo(originalTransactionID: transaction.originalID)
        return renewal?.productID ?? transaction.productID
    }

    /// A freshly signed request: its identifier, its JWS and its signing date (the sandbox clock).
    nonisolated func sign(
        originalTransactionID: String, productID: String, locale: String
    ) throws(SandboxError) -> (String, String, Date) {
        let identifier = UUID().uuidString.lowercased()
        let date = Date(epochMilliseconds: engine.clock.now().epochMilliseconds)
        let request = DecodedRealtimeRequestBody(
            originalTransactionID: originalTransactionID, productID: productID, userLocale: locale,
            requestIdentifier: identifier)
        do { return (identifier, try engine.signer.signRealtimeRequest(request, at: date), date) } catch {
            throw SandboxError(.stateUnavailable, "cannot sign the retention message request: \(error)")
        }
    }

    /// What the App Store makes of an exchange: a valid, timely answer (no failure), or the reason
    /// it would show the default message instead.
    func evaluate(
        _ exchange: RetentionSender.Exchange, limit: Duration
    ) -> (response: RealtimeResponseBody?, failure: SendAttemptResult?, problem: String?) {
        if let failure = exchange.failure {
            return (nil, failure, failure == .timedOut ? "no answer within \(limit.wholeMilliseconds) ms" : "no answer")
        }
        guard exchange.status == 200 else {
            return (nil, .unsuccessfulHTTPResponseCode, "answered HTTP \(exchange.status ?? 0)")
        }
        guard let body = exchange.body, let response = try? JSONDecoder().decode(RealtimeResponseBody.self, from: body)
        else { return (nil, .invalidResponse, "the answer is not a RealtimeResponseBody") }
        if let problem = problem(with: response) { return (response, .invalidResponse, problem) }
        guard exchange.elapsed <= limit else {
            return (
                response, .timedOut,
                "answered in \(exchange.elapsed.wholeMilliseconds) ms, later than \(limit.wholeMilliseconds) ms"
            )
        }
        return (response, nil, nil)
    }

    /// Why the App Store would not show `response`; `nil` when it would.
    private func problem(with response: RealtimeResponseBody) -> String? {
        guard response.choiceCount == 1 else {
            return "the answer must set exactly one of message, alternateProduct, promotionalOffer and "
                + "advancedCommerceInfo; it sets \(response.choiceCount)"
        }
        guard let identifier = response.chosenMessageIdentifier?.lowercased(),
            let message = apps[bundleID]?.messages[identifier]
        else { return "the answer names no uploaded message" }
        guard message.state == .approved else { return "message \(identifier) is not approved" }
        if let image = message.body.image?.imageIdentifier.lowercased(),
            apps[bundleID]?.images[image]?.state != .approved
        {
            return "the image of message \(identifier) is not approved"
        }
        if let alternate = response.alternateProduct {
            if alternate.productID?.isEmpty ?? true { return "alternateProduct names no productId" }
            if message.body.image != nil { return "a switch-plan message cannot have an image" }
        }
        if let offer = response.promotionalOffer {
            guard (offer.promotionalOfferSignatureV1 == nil) != (offer.promotionalOfferSignatureV2 == nil) else {
                return "promotionalOffer must carry exactly one of its two signatures"
            }
            if message.body.image != nil { return "a promotional-offer message cannot have an image" }
        }
        return nil
    }
}
