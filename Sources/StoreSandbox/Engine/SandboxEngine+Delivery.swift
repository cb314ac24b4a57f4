public import AppStoreModels
public import Foundation
import KakinWire

/// A notification the sandbox sent or will send, with every attempt: what the notification history
/// endpoint and a test notification's status report.
public struct NotificationRecord: LoggedRecord {
    /// The notification's `notificationUUID`, the same on every attempt.
    public var notificationUUID: String
    /// What happened (`SUBSCRIBED`, `DID_RENEW`, `REFUND`, …).
    public var notificationType: NotificationTypeV2
    /// The detail of what happened, for the types that have one.
    public var subtype: NotificationSubtype?
    /// The transaction the notification carries.
    public var transactionID: String
    /// The JWS that was (or will be) POSTed as `{"signedPayload": …}`.
    public var signedPayload: String
    /// Every attempt to post it, oldest first, with its outcome.
    public var attempts: [SendAttemptItem]
    /// When the next attempt is due; `nil` once delivered or given up.
    public var nextAttemptDate: Date?
    /// The notification's `signedDate` (`nil` for notifications queued before the sandbox kept it).
    public var signedDate: Date?

    /// Creates a record of a notification not yet attempted.
    public init(
        notificationUUID: String, notificationType: NotificationTypeV2, subtype: NotificationSubtype?,
        transactionID: String, signedPayload: String, nextAttemptDate: Date?, signedDate: Date? = nil
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionID = transactionID
        self.signedPayload = signedPayload
        attempts = []
        self.nextAttemptDate = nextAttemptDate
        self.signedDate = signedDate
    }

    /// Found by UUID.
    public var recordKey: String? { notificationUUID }
    /// Listed among the undelivered while an attempt is due.
    public var recordGroups: [RecordGroup] { nextAttemptDate == nil ? [] : [.undelivered] }
}

/// Sends one notification body to the developer's server and says how it went.
public protocol NotificationTransport: Sendable {
    /// POSTs `body` (JSON) to `url`; returns the attempt's result in Apple's terms.
    func post(_ body: Data, to url: URL) async -> SendAttemptResult
}

extension SandboxEngine {
    /// Apple's retry schedule after a failed attempt: +1, +12, +24, +48 and +72 hours after the
    /// previous attempt, then it gives up.
    public static let retryDelays: [TimeInterval] = [1, 12, 24, 48, 72].map { $0 * 3600 }

    /// Turns recorded events into signed notifications queued for delivery now.
    ///
    /// Each is signed at the moment its event happened, and later than every notification before
    /// it (by a millisecond at least, when events share a moment of the sandbox clock): a server
    /// that orders a subscription's reports by their signing dates sees them in the order they
    /// happened.
    @discardableResult
    public func queueNotifications() throws(SandboxError) -> [NotificationRecord] {
        var queued: [NotificationRecord] = []
        var previous = state.notifications.elements.last?.signedDate
        for event in try takeEvents() {
            let uuid = UUID()
            // Whole milliseconds, as the App Store signs dates.
            var milliseconds = event.date.epochMilliseconds
            if let previous { milliseconds = max(milliseconds, previous.epochMilliseconds + 1) }
            let signedDate = Date(epochMilliseconds: milliseconds)
            previous = signedDate
            let body = try signedNotification(for: event, uuid: uuid, signedDate: signedDate)
            queued.append(
                NotificationRecord(
                    notificationUUID: uuid.uuidString.lowercased(), notificationType: event.notificationType,
                    subtype: event.subtype, transactionID: event.transactionID,
                    signedPayload: body.signedPayload ?? "", nextAttemptDate: clock.now(), signedDate: signedDate))
        }
        guard !queued.isEmpty else { return [] }
        state.notifications.append(contentsOf: queued)
        try save()
        return queued
    }

    /// Sends every notification that is due to `url`, records each attempt, and schedules retries
    /// on the sandbox clock. Without a URL nothing is sent (the notifications stay queued).
    @discardableResult
    public func deliverDueNotifications(
        to url: URL?, using transport: any NotificationTransport
    ) async throws(SandboxError)
        -> [NotificationRecord]
    {
        guard let url else { return [] }
        try queueNotifications()
        let now = clock.now()
        var delivered: [NotificationRecord] = []
        for record in state.notifications.records(in: .undelivered) {
            guard let due = record.nextAttemptDate, due <= now else { continue }
            let body = (try? JSONEncoder().encode(ResponseBodyV2(signedPayload: record.signedPayload))) ?? Data()
            let result = await transport.post(body, to: url)
            // The actor may have run other calls while awaiting: find the record again by UUID.
            guard var current = state.notifications[record.notificationUUID] else { continue }
            current.attempts.append(SendAttemptItem(attemptDate: now, sendAttemptResult: result))
            let failures = current.attempts.count
            if result == .success || failures > Self.retryDelays.count {
                current.nextAttemptDate = nil
            } else {
                current.nextAttemptDate = now.addingTimeInterval(Self.retryDelays[failures - 1])
            }
            state.notifications[record.notificationUUID] = current
            delivered.append(current)
        }
        if !delivered.isEmpty { try save() }
        return delivered
    }

    /// Every notification queued or sent, oldest first.
    public func notificationHistory() -> [NotificationRecord] { state.notifications.elements }
}

/// Delivers notifications over HTTP with `URLSession`: 200–206 is success, as Apple counts it.
public struct URLSessionNotificationTransport: NotificationTransport {
    /// How long a post may take, in seconds, before it counts as timed out.
    public let timeout: TimeInterval

    /// Creates a transport whose posts time out after `timeout` seconds.
    public init(timeout: TimeInterval = 30) {
        self.timeout = timeout
    }

    public func post(_ body: Data, to url: URL) async -> SendAttemptResult {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        do {
            let (_, response) = try await URLSession.shared.cancellableData(for: request)
            guard let status = (response as? HTTPURLResponse)?.statusCode else { return .invalidResponse }
            return (200...206).contains(status) ? .success : .unsuccessfulHTTPResponseCode
        } catch let error as URLError {
            switch error.code {
            case .timedOut: return .timedOut
            case .cannotConnectToHost, .networkConnectionLost, .cannotFindHost: return .noResponse
            case .secureConnectionFailed, .serverCertificateUntrusted: return .tlsIssue
            case .httpTooManyRedirects: return .circularRedirect
            default: return .other
            }
        } catch {
            return .other
        }
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SandboxEngine {
    /// One round of the sandbox's background work: renewals up to the clock, then every
    /// notification that is due, sent to the configured URL. A running sandbox calls this about
    /// once a second; tests call the two steps themselves.
    public func runDueWork(using transport: any NotificationTransport) async {
        _ = try? processRenewals()
        _ = try? await deliverDueNotifications(to: state.settings.notificationURL, using: transport)
    }
}
