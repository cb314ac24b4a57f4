extension KakinStore {
    /// Shows the App Store's manage-subscriptions sheet, where the customer changes or cancels a
    /// subscription (all of them, or those of `subscriptionGroupID`), then reads the customer
    /// again. What the customer changed reaches the server through the App Store's notifications,
    /// so ``customerInfo`` may show it a little later.
    ///
    /// The backend shows the sheet: `StoreKitBackend(confirmIn:)` in the app's window scene. It
    /// throws ``KakinError/Code/notConfigured`` when the backend has no scene, and
    /// ``KakinError/Code/unsupported`` where the store has no such sheet (the sandbox, macOS).
    public func showManageSubscriptions(subscriptionGroupID: String? = nil) async throws(KakinError) {
        do {
            try await session.backend.showManageSubscriptions(subscriptionGroupID: subscriptionGroupID)
        } catch {
            throw Self.kakinError(error)
        }
        await refreshCustomerInfo()
    }

    /// Shows the App Store's refund request sheet for `transaction` (one of the customer's
    /// purchases) and returns what the customer did. A refund the App Store grants later arrives
    /// as a revoked transaction, and the entitlement goes with it. Throws as
    /// ``showManageSubscriptions(subscriptionGroupID:)`` does.
    public func beginRefundRequest(for transaction: StoreTransaction) async throws(KakinError) -> RefundRequestOutcome {
        try await beginRefundRequest(forTransactionID: transaction.id)
    }

    /// Shows the App Store's refund request sheet for the transaction `transactionID`, as
    /// ``beginRefundRequest(for:)`` does.
    public func beginRefundRequest(
        forTransactionID transactionID: String
    ) async throws(KakinError)
        -> RefundRequestOutcome
    {
        do {
            return try await session.backend.beginRefundRequest(for: transactionID)
        } catch {
            throw Self.kakinError(error)
        }
    }

    private static func kakinError(_ error: any Error) -> KakinError {
        error as? KakinError ?? KakinError(.storeFailure, "\(error)")
    }
}
