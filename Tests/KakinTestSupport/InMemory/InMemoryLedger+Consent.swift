import Foundation

@testable import KakinLedger

/// Rescinded consent in ``InMemoryLedger``: the latest rescission per app download, the
/// consent-scoped data erased with it. (The in-memory ledger keeps no outbox events.)
extension InMemoryLedger {
    public func recordConsentRescission(
        _ rescission: ConsentRescission, erasing: Set<ConsentScopedData>
    ) async throws -> ConsentRescissionOutcome {
        var rescission = rescission
        rescission.rescindedAt = stored(rescission.rescindedAt)
        rescission.recordedAt = stored(rescission.recordedAt)
        let key = AppKey(bundleID: rescission.bundleID, id: rescission.appTransactionID)
        if let current = consentRescissions[key], current.rescindedAt >= rescission.rescindedAt {
            return ConsentRescissionOutcome(recorded: false)
        }
        rescission.appUserID = rescission.appUserID ?? consentRescissions[key]?.appUserID
        rescission.erased = rescission.appUserID == nil ? [] : ConsentScopedData.allCases.filter(erasing.contains)
        consentRescissions[key] = rescission
        guard let customer = rescission.appUserID else { return ConsentRescissionOutcome(recorded: true) }
        var counts: [ConsentScopedData: Int] = [:]
        for data in rescission.erased {
            switch data {
            case .aliases:
                let erased = aliases.filter { $0.key.bundleID == rescission.bundleID && $0.value == customer }
                for alias in erased.keys { aliases[alias] = nil }
                counts[data] = erased.count
            case .appTransactions:
                let erased = appDownloads.filter {
                    $0.key.bundleID == rescission.bundleID && $0.value.appUserID == customer
                }
                for download in erased.keys { appDownloads[download] = nil }
                counts[data] = erased.count
            }
        }
        return ConsentRescissionOutcome(recorded: true, erasedCounts: counts)
    }

    public func consentRescission(bundleID: String, appUserID: String) async throws -> ConsentRescission? {
        consentRescissions.values.filter { $0.bundleID == bundleID && $0.appUserID == appUserID }
            .max { ($0.rescindedAt, $1.appTransactionID) < ($1.rescindedAt, $0.appTransactionID) }
    }
}
