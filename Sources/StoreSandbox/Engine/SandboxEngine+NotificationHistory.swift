public import AppStoreModels
import Foundation

extension SandboxEngine {
    /// Request a Test Notification: queues a signed TEST notification for delivery now and returns
    /// its token (the notification's UUID).
    public func requestTestNotification() throws(SandboxError) -> String {
        let uuid = UUID().uuidString.lowercased()
        let now = clock.now()
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: .test, notificationUUID: uuid,
            data: NotificationData(
                appAppleID: signer.appAppleID, bundleID: signer.bundleID, bundleVersion: signer.applicationVersion,
                environment: .sandbox),
            version: "2.0", signedDate: now)
        let signed: String
        do { signed = try signer.signNotification(payload, at: now) } catch {
            throw SandboxError(.stateUnavailable, "cannot sign the test notification: \(error)")
        }
        state.notifications.append(
            NotificationRecord(
                notificationUUID: uuid, notificationType: .test, subtype: nil, transactionID: "", signedPayload: signed,
                nextAttemptDate: now))
        try save()
        return uuid
    }

    /// Get Test Notification Status.
    public func testNotificationStatus(token: String) throws(SandboxError) -> CheckTestNotificationResponse {
        guard
            let record = state.notifications[token], record.notificationType == .test
        else { throw SandboxError(.unknownTransaction, "no test notification has token \(token)") }
        return CheckTestNotificationResponse(
            signedPayload: record.signedPayload, sendAttempts: record.attempts,
            firstSendAttemptResult: record.attempts.first?.sendAttemptResult)
    }

    /// Get Notification History: notifications first attempted between the request's dates,
    /// filtered by type, subtype or transaction (its whole subscription), or only those never
    /// delivered; 20 per page with a pagination token.
    public func notificationHistory(
        _ request: NotificationHistoryRequest, paginationToken: String? = nil
    )
        throws(SandboxError) -> NotificationHistoryResponse
    {
        guard let start = request.startDate, let end = request.endDate, start < end else {
            throw SandboxError(.invalidRequest, "startDate and endDate are required, startDate before endDate")
        }
        var originalIDs: Set<String> = []
        if let id = request.transactionID {
            let testerID = try customer(of: id)
            originalIDs = Set(
                transactions(of: testerID).filter { $0.id == id || $0.originalID == id }.map(\.originalID))
        }
        let selected = state.notifications.filter { record in
            guard let first = record.attempts.first?.attemptDate, first >= start, first < end else { return false }
            if let type = request.notificationType, record.notificationType != type { return false }
            if let subtype = request.notificationSubtype, record.subtype != subtype { return false }
            if request.transactionID != nil {
                guard let transaction = state.transactions[record.transactionID],
                    originalIDs.contains(transaction.originalID)
                else { return false }
            }
            if request.onlyFailures == true, record.attempts.contains(where: { $0.sendAttemptResult == .success }) {
                return false
            }
            return true
        }
        var offset = 0
        if let paginationToken {
            guard let value = Int(paginationToken), value >= 0 else {
                throw SandboxError(
                    .invalidRequest, "the pagination token \(paginationToken) was not issued by this sandbox")
            }
            offset = value
        }
        let pageEnd = min(selected.count, offset + Self.pageSize)
        let page = offset < pageEnd ? selected[offset..<pageEnd] : []
        return NotificationHistoryResponse(
            paginationToken: pageEnd < selected.count ? String(pageEnd) : nil, hasMore: pageEnd < selected.count,
            notificationHistory: page.map {
                NotificationHistoryResponseItem(signedPayload: $0.signedPayload, sendAttempts: $0.attempts)
            })
    }
}
