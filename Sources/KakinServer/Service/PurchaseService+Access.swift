/// What the readiness check asks of the ledger. (The dashboard's sessions and the sign-in
/// throttle keep their records in the ledger's `SessionLedger` role themselves.)
extension PurchaseService {
    /// Answers when the ledger does.
    public func pingLedger() async throws {
        try await upkeep.ping()
    }
}
