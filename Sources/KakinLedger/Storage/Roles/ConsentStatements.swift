import AppStoreModels
import Foundation

/// A row of `consent_rescissions`: the latest rescission of consent Apple signed for one app
/// download.
struct ConsentRescissionRecord: LedgerRecord {
    static let table = "consent_rescissions"
    typealias Columns = CodingKeys

    var bundleID: String
    var appTransactionID: String
    var appUserID: String?
    var environment: String
    var rescindedAt: Int64
    var notificationUUID: String
    var recordedAt: Int64
    /// The consent-scoped data erased, by name, comma-separated; empty when none was.
    var erased: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case appTransactionID = "app_transaction_id"
        case appUserID = "app_user_id"
        case environment
        case rescindedAt = "rescinded_at"
        case notificationUUID = "notification_uuid"
        case recordedAt = "recorded_at"
        case erased
    }

    init(_ rescission: ConsentRescission) {
        bundleID = rescission.bundleID
        appTransactionID = rescission.appTransactionID
        appUserID = rescission.appUserID
        environment = rescission.environment.rawValue
        rescindedAt = LedgerTime.milliseconds(rescission.rescindedAt)
        notificationUUID = rescission.notificationUUID
        recordedAt = LedgerTime.milliseconds(rescission.recordedAt)
        erased = rescission.erased.map(\.rawValue).joined(separator: ",")
    }

    var rescission: ConsentRescission {
        ConsentRescission(
            bundleID: bundleID, appTransactionID: appTransactionID, appUserID: appUserID,
            environment: AppStoreEnvironment(rawValue: environment), rescindedAt: LedgerTime.date(rescindedAt),
            notificationUUID: notificationUUID, recordedAt: LedgerTime.date(recordedAt),
            erased: erased.split(separator: ",").compactMap { ConsentScopedData(rawValue: String($0)) })
    }
}

/// Rescinded consent, the same statements on both engines. None of them runs when a purchase is
/// recorded.
extension StatementEngine {
    public func recordConsentRescission(
        _ rescission: ConsentRescission, erasing: Set<ConsentScopedData>
    ) async throws -> ConsentRescissionOutcome {
        let scoped = ConsentScopedData.allCases.filter(erasing.contains)
        // The customer a download was linked to when an earlier rescission of it was recorded
        // stays its customer: its link may have been erased with that rescission.
        let known: LedgerSQL = """
            SELECT app_user_id AS value FROM consent_rescissions
            WHERE bundle_id = \(rescission.bundleID) AND app_transaction_id = \(rescission.appTransactionID)
            """
        return try await perform(
            for: rescission.appUserID,
            .run([known]) { rows in
                let previous = try rows[0].first(LedgerColumn<String?>.self)?.value ?? nil
                let recorded = Self.recorded(rescission, customer: rescission.appUserID ?? previous, erasing: scoped)
                // A later rescission of the same download (consent given, then withdrawn again)
                // replaces the earlier; the same one again, or an earlier one arriving late,
                // changes nothing.
                let upsert: LedgerSQL = try """
                    INSERT INTO \(insert: ConsentRescissionRecord(recorded))
                    ON CONFLICT (bundle_id, app_transaction_id) DO UPDATE SET
                        app_user_id = excluded.app_user_id, environment = excluded.environment,
                        rescinded_at = excluded.rescinded_at, notification_uuid = excluded.notification_uuid,
                        recorded_at = excluded.recorded_at, erased = excluded.erased
                    WHERE consent_rescissions.rescinded_at < excluded.rescinded_at
                    RETURNING app_transaction_id
                    """
                return .run([upsert]) { rows in
                    guard rows[0].count > 0 else { return .done(ConsentRescissionOutcome(recorded: false)) }
                    guard let customer = recorded.appUserID else {
                        return .done(ConsentRescissionOutcome(recorded: true))
                    }
                    return Self.erase(recorded, of: customer)
                }
            })
    }

    /// `rescission` as it is recorded: for `customer`, erasing `scoped` when there is one.
    private static func recorded(
        _ rescission: ConsentRescission, customer: String?, erasing scoped: [ConsentScopedData]
    ) -> ConsentRescission {
        var recorded = rescission
        recorded.appUserID = customer
        recorded.erased = customer == nil ? [] : scoped
        return recorded
    }

    /// Erases the consent-scoped data `rescission` names for `customer` and appends its event.
    private static func erase(
        _ rescission: ConsentRescission, of customer: String
    ) -> LedgerTransaction<ConsentRescissionOutcome> {
        let erasures: [LedgerSQL] = rescission.erased.map { data in
            switch data {
            case .aliases:
                """
                DELETE FROM customer_aliases
                WHERE bundle_id = \(rescission.bundleID) AND app_user_id = \(customer) RETURNING alias
                """
            case .appTransactions:
                """
                DELETE FROM app_transactions
                WHERE bundle_id = \(rescission.bundleID) AND app_user_id = \(customer) RETURNING app_transaction_id
                """
            }
        }
        return .run(erasures) { erasedRows in
            let counts = Dictionary(
                zip(rescission.erased, erasedRows.map(\.count)), uniquingKeysWith: { first, _ in first })
            let event = EventStatements.append(
                LedgerEventType.customerConsentRescinded, bundleID: rescission.bundleID, appUserID: customer,
                payload: ConsentRescindedEventPayload(rescission, appUserID: customer, erased: counts),
                at: LedgerTime.milliseconds(rescission.recordedAt))
            return .run(event) { _ in .done(ConsentRescissionOutcome(recorded: true, erasedCounts: counts)) }
        }
    }

    public func consentRescission(bundleID: String, appUserID: String) async throws -> ConsentRescission? {
        try await read(
            """
            SELECT \(unescaped: ConsentRescissionRecord.selection()) FROM consent_rescissions
            WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
            ORDER BY rescinded_at DESC, app_transaction_id LIMIT 1
            """, as: ConsentRescissionRecord.self
        ).first?.rescission
    }
}
