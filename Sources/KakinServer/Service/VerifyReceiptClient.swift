public import AppStoreModels
public import Foundation
import KakinLedger
import KakinWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends a verifyReceipt request to one endpoint. Injected, so tests can stand in for Apple.
public protocol VerifyReceiptClient: Sendable {
    /// POSTs `request` to `url`; throws only for transport failures (no answer, not JSON).
    func verify(_ request: VerifyReceiptRequest, at url: URL) async throws -> VerifyReceiptResponse
}

/// verifyReceipt over HTTP with `URLSession`.
public struct URLSessionVerifyReceiptClient: VerifyReceiptClient {
    /// How long a request may take, in seconds, before it fails.
    public let timeout: TimeInterval

    /// Creates a client whose requests fail after `timeout` seconds.
    public init(timeout: TimeInterval = 30) {
        self.timeout = timeout
    }

    public func verify(_ request: VerifyReceiptRequest, at url: URL) async throws -> VerifyReceiptResponse {
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
        urlRequest.httpBody = try JSONEncoder().encode(request)
        let (data, _) = try await URLSession.shared.cancellableData(for: urlRequest)
        return try JSONDecoder().decode(VerifyReceiptResponse.self, from: data)
    }
}
