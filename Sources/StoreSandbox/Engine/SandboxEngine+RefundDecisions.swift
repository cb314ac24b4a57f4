public import AppStoreModels
import Foundation

/// How the sandbox's App Store decides a refund request.
public enum RefundDecisionRule: String, Codable, Hashable, Sendable, CaseIterable {
    /// As the developer's consumption information prefers: `DECLINE` declines, `GRANT_FULL` and
    /// `GRANT_PRORATED` grant; without a preference (or without any information) the refund is
    /// granted, as the App Store mostly does.
    case followPreference
    /// Grant whatever the developer said.
    case grant
    /// Decline whatever the developer said.
    case decline
}

extension SandboxEngine {
    /// The App Store decides a pending refund request by `rule`: a refund (REFUND) or a decline
    /// (REFUND_DECLINED). Returns whether it was granted.
    ///
    /// A granted refund is full, except when the developer's consumption information prefers
    /// `GRANT_PRORATED` with a `consumptionPercentage` below 100 %: then the share not consumed is
    /// refunded (`REFUND_PRORATED`; 30 % consumed refunds 70 %), as Apple bases a prorated refund on
    /// consumption.
    ///
    /// - Throws: ``SandboxError/Code/invalidRequest`` when no refund of the transaction is pending,
    ///   ``SandboxError/Code/unknownTransaction`` for an unknown ID.
    @discardableResult
    public func decideRefund(_ transactionID: String, rule: RefundDecisionRule = .followPreference)
        throws(SandboxError) -> Bool
    {
        _ = try transaction(transactionID)
        guard state.refundRequests[transactionID] != nil else {
            throw SandboxError(.invalidRequest, "no refund of \(transactionID) is waiting for a decision")
        }
        let grant: Bool
        switch rule {
        case .grant: grant = true
        case .decline: grant = false
        case .followPreference:
            grant = state.consumptionReports[transactionID]?.refundPreference != .decline
        }
        if grant {
            let report = state.consumptionReports[transactionID]
            var percentage: Int?
            if report?.refundPreference == .grantProrated, let consumed = report?.consumptionPercentage,
                (1..<Self.fullRefundPercentage).contains(consumed)
            {
                percentage = Self.fullRefundPercentage - consumed
            }
            try refund(transactionID, reason: .other, percentage: percentage)
        } else {
            try declineRefund(transactionID)
        }
        return grant
    }

    /// The consumption information developers sent, by transaction ID, newest transaction first.
    public func consumptionReports() -> [(transactionID: String, report: ConsumptionRequest)] {
        state.consumptionReports.dictionary.map { (transactionID: $0.key, report: $0.value) }.sorted {
            ($0.transactionID.count, $0.transactionID) > ($1.transactionID.count, $1.transactionID)
        }
    }
}
