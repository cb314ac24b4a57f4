public import AppStoreModels
public import Foundation

/// Whether, and how strictly, the App Store's signing certificates are checked for revocation.
///
/// With a check on, the leaf and the intermediate of every chain are checked with OCSP at the
/// responder each certificate names (its Authority Information Access extension), and the chain
/// is validated at the current time, as Apple's own libraries do with online checks on.
public enum RevocationMode: String, Codable, Hashable, Sendable, CaseIterable {
    /// Every chain needs a current, signed "good" answer for both certificates. A revoked
    /// certificate is rejected for good (``AppStoreSecurityError/Code/certificateRevoked``); no usable
    /// answer (a responder down, or an answer that does not verify or is out of date) rejects with
    /// the retryable ``AppStoreSecurityError/Code/revocationUnavailable``.
    case require
    /// A verified "revoked" answer rejects, as with ``require``; when no usable answer can be had,
    /// the chain passes, and the pass is reported (logged and counted by the server).
    case bestEffort
    /// No OCSP; the chain is validated at the payload's signing date.
    case off

    /// `require` for Production, `bestEffort` for Sandbox, `off` for Xcode (whose single
    /// self-signed certificate names no responder).
    public static func defaultMode(for environment: AppStoreEnvironment) -> RevocationMode {
        switch environment {
        case .production: .require
        case .sandbox: .bestEffort
        default: .off
        }
    }
}

/// Carries an OCSP request to a responder and brings back its answer.
///
/// ``URLSessionOCSPTransport`` posts over HTTP; tests inject their own to play a responder that
/// is down, slow, forged or out of date.
public protocol OCSPTransport: Sendable {
    /// Posts `request` (DER, `application/ocsp-request`) to `url`; returns the HTTP status and body.
    /// Throws when the responder cannot be reached.
    func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8])
}

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Posts OCSP requests with `URLSession`, as RFC 6960's HTTP binding says (POST,
/// `application/ocsp-request`), giving up after ``timeout``.
public struct URLSessionOCSPTransport: OCSPTransport {
    /// Seconds to wait for a responder before it counts as unavailable.
    public var timeout: TimeInterval
    /// Sends one request and returns its body and response (`URLSession.shared.data(for:)` unless
    /// the creator gives another, such as one that is safe to cancel on Linux).
    public var send: @Sendable (URLRequest) async throws -> (Data, URLResponse)

    /// Creates a transport that gives up on a responder after `timeout` seconds and sends with
    /// `send`.
    public init(
        timeout: TimeInterval = 5,
        send: @escaping @Sendable (URLRequest) async throws -> (Data, URLResponse) = {
            try await URLSession.shared.data(for: $0)
        }
    ) {
        self.timeout = timeout
        self.send = send
    }

    public func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8]) {
        guard let target = URL(string: url), target.scheme == "http" || target.scheme == "https" else {
            throw URLError(.badURL)
        }
        var message = URLRequest(url: target, timeoutInterval: timeout)
        message.httpMethod = "POST"
        message.setValue("application/ocsp-request", forHTTPHeaderField: "Content-Type")
        message.setValue("application/ocsp-response", forHTTPHeaderField: "Accept")
        message.httpBody = Data(request)
        let (body, response) = try await send(message)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, Array(body))
    }
}
