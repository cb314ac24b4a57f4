public import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinLedger

extension PurchaseService {
    /// What the server chose for one `Get Retention Message` request.
    public struct RetentionChoice: Sendable {
        /// The app the request was about.
        public var bundleID: String
        /// The request, as Apple signed it.
        public var request: DecodedRealtimeRequestBody
        /// The subscriber as the rules read them; `nil` when the ledger knows no such subscription.
        public var subscriber: RetentionSubscriber?
        /// The rule that matched; `nil` when none did (the App Store shows its default message).
        public var rule: RetentionRule?
        /// The answer sent to the App Store.
        public var answer: RealtimeResponseBody
    }

    /// `POST /v1/retention/apple`: the App Store asks which retention message to show a subscriber
    /// who opened the page where they may cancel. The request is verified as notifications are
    /// (Apple's chain, the environment, and the app's `appAppleId`, which names the app: the request
    /// carries no bundle ID), the subscriber is read from the ledger (their subscription, their
    /// purchases in the app, its renewal state), and the app's ``RetentionPolicy`` chooses. When no
    /// rule matches, or the ledger knows no such subscription, the answer has no choice and the App
    /// Store shows the default message of the product and locale. What was chosen is recorded
    /// (`RetentionLedger.recordRetentionDecision(_:)`, once per request identifier) and counted
    /// (`kakin_retention_answers_total`); a failure to record is logged and the answer still sent.
    ///
    /// - Throws: ``ServerError/Code/invalidRequest`` without a signed payload;
    ///   ``ServerError/Code/verificationFailed`` for a request that fails verification or names an
    ///   app this server does not serve.
    public func answerRetentionRequest(_ body: RealtimeRequestBody) async throws -> RetentionChoice {
        guard let signedPayload = body.signedPayload, !signedPayload.isEmpty else {
            throw ServerError(.invalidRequest, "the body has no signedPayload")
        }
        let (_, unverified) = try Self.decode(signedPayload, as: DecodedRealtimeRequestBody.self)
        guard let appAppleID = unverified.appAppleID,
            let app = apps.values.sorted(by: { $0.bundleID < $1.bundleID }).first(where: { $0.appAppleID == appAppleID })
        else {
            throw ServerError(
                .verificationFailed, "the request names no app this server serves (appAppleId)", cause: "unknownApp")
        }
        guard let environment = unverified.environment else {
            throw ServerError(.verificationFailed, "the request names no environment", cause: "malformedInput")
        }
        let verifier = try verifier(app, environment)
        let request: DecodedRealtimeRequestBody
        do { request = try await verifier.verifyRealtimeRequest(signedPayload) } catch {
            throw ServerError(verification: error)
        }
        let known = try await retentionSubscriber(request, app: app)
        let subscriber = known?.subscriber
        let rule = subscriber.flatMap { (app.retention ?? RetentionPolicy()).rule(for: $0) }
        var answer = RealtimeResponseBody()
        if let rule {
            answer = try retentionAnswer(rule.answer, request: request, app: app)
        }
        metrics?.retentionAnswer(bundleID: app.bundleID, messageID: rule?.answer.messageID)
        await recordRetentionDecision(
            request, app: app, environment: request.environment ?? environment, subscriber: subscriber,
            periodExpiresAt: known?.periodExpiresAt, rule: rule)
        logger.info(
            "retention.answered",
            metadata: [
                "bundleId": .string(app.bundleID), "requestIdentifier": .string(request.requestIdentifier ?? ""),
                "originalTransactionId": .string(request.originalTransactionID ?? ""),
                "rule": .string(rule?.name ?? ""), "messageId": .string(rule?.answer.messageID ?? ""),
            ])
        return RetentionChoice(bundleID: app.bundleID, request: request, subscriber: subscriber, rule: rule, answer: answer)
    }

    /// The saves by message of an app's retention answers in `environment` made on the UTC days
    /// `days`, with the outcomes as of now; none when the service records no decisions.
    public func retentionSaves(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>
    ) async throws -> [RetentionSaves] {
        guard let retention else { return [] }
        return try await retention.retentionSaves(
            bundleID: bundleID, environment: environment, from: DailyFigures.start(ofDay: days.lowerBound),
            before: DailyFigures.start(ofDay: days.upperBound + 1), now: now())
    }

    /// Records what was chosen for `request` (`RetentionLedger.recordRetentionDecision(_:)`: one
    /// insert, once per request identifier), unless the service records no decisions or the request
    /// names no request identifier or subscription. A failure is logged, never thrown: the answer
    /// still reaches Apple.
    private func recordRetentionDecision(
        _ request: DecodedRealtimeRequestBody, app: AppConfiguration, environment: AppStoreEnvironment,
        subscriber: RetentionSubscriber?, periodExpiresAt: Date?, rule: RetentionRule?
    ) async {
        guard let retention, let requestID = request.requestIdentifier, let originalID = request.originalTransactionID
        else { return }
        var decision = RetentionDecision(
            id: UUID().uuidString, bundleID: app.bundleID, environment: environment, requestIdentifier: requestID,
            originalTransactionID: originalID, productID: request.productID ?? "", locale: request.userLocale ?? "",
            subscriberState: subscriber?.state.rawValue, ruleName: rule?.name, choice: .none, decidedAt: now(),
            periodExpiresAt: periodExpiresAt)
        switch rule?.answer {
        case nil: break
        case .message(let messageID):
            (decision.choice, decision.messageID) = (.message, messageID)
        case .alternateProduct(let productID, let messageID):
            (decision.choice, decision.messageID) = (.alternateProduct, messageID)
            decision.alternateProductID = productID
        case .promotionalOffer(let offerID, let messageID):
            (decision.choice, decision.messageID, decision.offerID) = (.promotionalOffer, messageID, offerID)
        }
        do {
            _ = try await retention.recordRetentionDecision(decision)
        } catch {
            logger.error(
                "retention.not_recorded",
                metadata: [
                    "bundleId": .string(app.bundleID), "requestIdentifier": .string(requestID),
                    "error": .string("\(error)"),
                ])
        }
    }

    /// The subscriber a request is about, from the ledger, with the end of the subscription's
    /// current period (its latest transaction's expiry): `nil` when it holds no such subscription
    /// of the app. The product is the request's, or, when it names none (a preview), the one the
    /// subscription's latest transaction is for.
    func retentionSubscriber(
        _ request: DecodedRealtimeRequestBody, app: AppConfiguration
    ) async throws -> (subscriber: RetentionSubscriber, periodExpiresAt: Date?)? {
        guard let originalID = request.originalTransactionID,
            let original = try await purchases.transaction(id: originalID), original.bundleID == app.bundleID
        else { return nil }
        let purchasesInApp =
            if let owner = original.appUserID {
                try await customers.customer(bundleID: app.bundleID, appUserID: owner).transactions
            } else {
                [original]
            }
        let subscription = purchasesInApp.filter { $0.originalTransactionID == originalID }
        let renewal = try await purchases.subscriptionRenewals(bundleID: app.bundleID, originalTransactionIDs: [originalID])[
            originalID]
        let latest = subscription.max { $0.purchaseDate < $1.purchaseDate } ?? original
        let state: RetentionSubscriberState =
            if renewal?.billingIssueDetectedAt != nil {
                .billingIssue
            } else if latest.periodType == .trial {
                .trial
            } else {
                .paid
            }
        let first = subscription.map(\.purchaseDate).min() ?? original.purchaseDate
        var lifetimeValue: [String: Int64] = [:]
        for purchase in purchasesInApp where purchase.revocationDate == nil {
            guard let price = purchase.price, let currency = purchase.currency else { continue }
            lifetimeValue[currency, default: 0] += price
        }
        let subscriber = RetentionSubscriber(
            productID: request.productID ?? latest.productID, locale: request.userLocale ?? "", state: state,
            tenureDays: max(0, Int(now().timeIntervalSince(first) / 86_400)),
            refunds: purchasesInApp.filter { $0.revocationDate != nil }.count, lifetimeValue: lifetimeValue)
        return (subscriber, latest.expiresDate)
    }

    /// The App Store's form of a rule's answer; a promotional offer is signed now, with the app's
    /// In-App Purchase key, for the product the subscriber cancels.
    private func retentionAnswer(
        _ answer: RetentionAnswer, request: DecodedRealtimeRequestBody, app: AppConfiguration
    ) throws -> RealtimeResponseBody {
        switch answer {
        case .message(let messageID):
            return .message(messageID)
        case .alternateProduct(let productID, let messageID):
            return RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: messageID, productID: productID))
        case .promotionalOffer(let offerID, let messageID):
            guard let access = app.serverAPI, let productID = request.productID else {
                throw ServerError(
                    .notConfigured, "\(app.bundleID) has no In-App Purchase key (appStoreServerAPI) to sign offers with",
                    cause: "notConfigured")
            }
            let signer = OfferSigner(
                keyID: access.keyID, issuerID: access.issuerID, bundleID: app.bundleID, privateKey: access.privateKey)
            let jws: String
            do {
                jws = try signer.promotionalOffer(
                    productID: productID, offerID: offerID, transactionID: request.originalTransactionID, nonce: UUID(),
                    issuedAt: now())
            } catch { throw ServerError(.internalError, "the offer cannot be signed: \(error)") }
            return RealtimeResponseBody(
                promotionalOffer: RetentionPromotionalOffer(messageIdentifier: messageID, promotionalOfferSignatureV2: jws))
        }
    }
}
