import AppStoreModels
import Foundation

extension PurchaseService {
    /// What the app's retention rules would answer for one subscriber, worked out without a
    /// request from Apple and without recording anything.
    public struct RetentionPreview: Sendable {
        /// The app.
        public var bundleID: String
        /// The subscription asked about.
        public var originalTransactionID: String
        /// The locale the request would carry.
        public var locale: String
        /// The subscriber as the rules read them; `nil` when the ledger knows no such subscription
        /// of the app (Apple's request would then be answered with no choice).
        public var subscriber: RetentionSubscriber?
        /// The first rule that matches; `nil` when none does (the App Store shows the default
        /// message of the product and locale).
        public var rule: RetentionRule?

        /// What the App Store would show: the rule's answer, or `nil` for the default message.
        public var answer: RetentionAnswer? { rule?.answer }
    }

    /// What `bundleID`'s rules (`apps[].retention`) would answer if the App Store asked now about
    /// `originalTransactionID` in `locale`: the subscriber read from the ledger as for a real
    /// request, then the first matching rule. The product is the one the subscription's latest
    /// transaction is for (a real request names the product the subscriber would cancel). Nothing
    /// is recorded, logged as an answer, or signed.
    ///
    /// - Throws: ``ServerError/Code/unknownApp`` for an app this server does not serve.
    public func previewRetention(
        bundleID: String, originalTransactionID: String, locale: String
    ) async throws -> RetentionPreview {
        guard let app = apps[bundleID] else {
            throw ServerError(.unknownApp, "this server serves no app \(bundleID)")
        }
        var preview = RetentionPreview(bundleID: bundleID, originalTransactionID: originalTransactionID, locale: locale)
        let request = DecodedRealtimeRequestBody(originalTransactionID: originalTransactionID, userLocale: locale)
        preview.subscriber = try await retentionSubscriber(request, app: app)?.subscriber
        preview.rule = preview.subscriber.flatMap { (app.retention ?? RetentionPolicy()).rule(for: $0) }
        return preview
    }
}
