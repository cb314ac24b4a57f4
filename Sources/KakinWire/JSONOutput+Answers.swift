public import KakinCore

// MARK: - The answers the server writes most

extension Entitlement {
    /// Writes this entitlement as ``KakinJSON/encoder()`` would.
    public func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("billingIssueDetectedAt", billingIssueDetectedAt.map(KakinJSON.epochMilliseconds))
            output.field("consentRescindedDate", consentRescindedDate.map(KakinJSON.epochMilliseconds))
            output.field("environment", environment?.rawValue)
            output.field("expiresDate", expiresDate.map(KakinJSON.epochMilliseconds))
            output.field("gracePeriodExpiresAt", gracePeriodExpiresAt.map(KakinJSON.epochMilliseconds))
            output.field("identifier", identifier)
            output.field("isActive", isActive)
            output.field("originalTransactionId", originalTransactionID)
            output.field("periodType", periodType?.rawValue)
            output.field("productId", productID)
            output.field("revocationDate", revocationDate.map(KakinJSON.epochMilliseconds))
            output.field("store", store?.rawValue)
            output.field("transactionId", transactionID)
            output.field("willRenew", willRenew)
        }
    }
}

extension CustomerAnswer.Transaction {
    /// Writes this transaction as ``KakinJSON/encoder()`` would.
    public func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("environment", environment)
            output.field("expiresDate", expiresDate)
            output.field("originalTransactionId", originalTransactionId)
            output.field("productId", productId)
            output.field("productType", productType)
            output.field("purchaseDate", purchaseDate)
            output.field("quantity", quantity)
            output.field("revocationDate", revocationDate)
            output.field("revocationReason", revocationReason)
            output.field("signedTransaction", signedTransaction)
            output.field("source", source)
            output.field("store", store?.rawValue)
            output.field("transactionId", transactionId)
        }
    }
}

extension CustomerAnswer {
    /// Writes this answer as ``KakinJSON/encoder()`` would.
    public func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("appUserId", appUserId)
            output.field("balances", balances)
            output.field("bundleId", bundleId)
            output.key("entitlements")
            output.array(entitlements) { output, entitlement in entitlement.write(to: &output) }
            output.field("transactionCount", transactionCount)
            output.key("transactions")
            output.array(transactions) { output, transaction in transaction.write(to: &output) }
        }
    }
}

extension SignedCustomerAnswer {
    /// The JSON bytes of this answer, the same as ``KakinJSON/encoder()`` writes.
    public func jsonBytes() -> [UInt8] {
        var output = JSONOutput(capacity: 256 + customer.transactions.count * 320 + customer.entitlements.count * 200)
        output.object { output in
            output.key("customer")
            customer.write(to: &output)
            output.field("nonce", nonce)
            output.field("signedDate", signedDate)
        }
        return output.bytes
    }
}

extension TransactionPage {
    /// The JSON bytes of this page, the same as ``KakinJSON/encoder()`` writes.
    public func jsonBytes() -> [UInt8] {
        var output = JSONOutput(capacity: 256 + transactions.count * 320)
        output.object { output in
            output.field("appUserId", appUserId)
            output.field("bundleId", bundleId)
            output.field("nextCursor", nextCursor)
            output.field("nonce", nonce)
            output.field("signedDate", signedDate)
            output.key("transactions")
            output.array(transactions) { output, transaction in transaction.write(to: &output) }
        }
        return output.bytes
    }
}
